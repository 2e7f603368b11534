import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * A secret the service must read back (so it cannot be hashed), encrypted at
 * rest with AES-256-GCM under SECRETS_KEY and bound to `context` (associated
 * data, e.g. "member-totp:<id>") so a ciphertext copied onto another row
 * does not decrypt. Webhook secrets are sealed with their endpoint id as context.
 */
const VERSION = "v1";

export function sealSecret(key: Buffer, context: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(context));
  const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString("base64")}`;
}

export function openSecret(key: Buffer, context: string, stored: string): string {
  const [version, payload] = stored.split(".", 2);
  if (version !== VERSION || !payload) throw new Error("unknown sealed secret format");
  const bytes = Buffer.from(payload, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, 12));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8");
}

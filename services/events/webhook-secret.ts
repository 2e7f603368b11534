import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomBytes, type KeyObject } from "node:crypto";

/**
 * Webhook signing secrets, Standard Webhooks style: `whsec_` + base64 of 32
 * random bytes; the HMAC key is the decoded bytes. Unlike API keys they cannot
 * be stored hashed (we sign with them), so they are encrypted at rest with
 * AES-256-GCM under SECRETS_KEY, bound to their endpoint id (associated data)
 * so a ciphertext copied onto another row does not decrypt.
 */
export const SECRET_PREFIX = "whsec_";
const CIPHERTEXT_VERSION = "v1";

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}

export function encryptSecret(key: Buffer, endpointId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(endpointId));
  const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return `${CIPHERTEXT_VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString("base64")}`;
}

export function decryptSecret(key: Buffer, endpointId: string, stored: string): string {
  const [version, payload] = stored.split(".", 2);
  if (version !== CIPHERTEXT_VERSION || !payload) throw new Error("unknown webhook secret ciphertext format");
  const bytes = Buffer.from(payload, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, 12));
  decipher.setAAD(Buffer.from(endpointId));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8");
}

/**
 * The HMAC key of a secret, prepared once (a KeyObject signs ~5× faster than
 * the secret's bytes, which are turned into a key on every call).
 */
export function signingKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret.slice(SECRET_PREFIX.length), "base64"));
}

/**
 * The `webhook-signature` header: one `v1,<base64 HMAC-SHA256>` of
 * `${id}.${timestamp}.${body}` per active secret (or its signingKey), space-separated.
 */
export function signatureHeader(secrets: readonly (string | KeyObject)[], id: string, timestampSeconds: number, body: string): string {
  const signed = `${id}.${timestampSeconds}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac("sha256", typeof secret === "string" ? signingKey(secret) : secret).update(signed).digest("base64")}`)
    .join(" ");
}

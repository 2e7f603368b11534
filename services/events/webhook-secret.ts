import { createHmac, createSecretKey, randomBytes, type KeyObject } from "node:crypto";

/**
 * Webhook signing secrets, Standard Webhooks style: `whsec_` + base64 of 32
 * random bytes; the HMAC key is the decoded bytes. Unlike API keys they cannot
 * be stored hashed (we sign with them), so they are sealed at rest
 * (platform/sealed-secret.ts) with their endpoint id as context, so a
 * ciphertext copied onto another row does not decrypt.
 */
const SECRET_PREFIX = "whsec_";

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
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
    .map(
      (secret) =>
        `v1,${createHmac("sha256", typeof secret === "string" ? signingKey(secret) : secret)
          .update(signed)
          .digest("base64")}`,
    )
    .join(" ");
}

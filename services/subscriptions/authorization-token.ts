import { createHash, randomBytes } from "node:crypto";

/**
 * The token in an authorization URL: 32 random bytes, base64url (43 chars).
 * Only its SHA-256 is stored, so a database leak yields no usable link; the
 * lookup is an exact match on the digest, which reveals nothing by timing.
 */
export function generateAuthorizationToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString("base64url");
  return { token, hash: hashAuthorizationToken(token) };
}

export function hashAuthorizationToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Cheap shape check before any lookup: tokens we issue are exactly 43 base64url characters. */
export const looksLikeAuthorizationToken = (value: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(value);

export function authorizationUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/authorize/${token}`;
}

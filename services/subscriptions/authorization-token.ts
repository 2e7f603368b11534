import { createHash, createHmac, hkdfSync, randomBytes } from "node:crypto";

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

/** The key change-session links are derived with: from SECRETS_KEY under its own label (not the key itself). */
export function deriveLinkKey(secretsKey: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", secretsKey, Buffer.alloc(0), "approval-link-token-v1", 32));
}

/**
 * A change session's link token: HMAC-SHA256 of the session id under the link
 * key (32 bytes, base64url, the same shape as a random token). Only its digest
 * is stored, as for authorizations, but the service can compute the URL again,
 * so the merchant reads `approvalUrl` on GET and list while the session is
 * open, not only in the create response. Unguessable without SECRETS_KEY.
 */
export function changeSessionToken(linkKey: Buffer, changeSessionId: string): { token: string; hash: string } {
  const token = createHmac("sha256", linkKey).update(`change-session:${changeSessionId}`).digest("base64url");
  return { token, hash: hashAuthorizationToken(token) };
}

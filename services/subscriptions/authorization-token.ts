import { createHash, createHmac, createSecretKey, hkdfSync, type KeyObject } from "node:crypto";

/**
 * The tokens in approval links (a subscription's authorization URL, a change
 * session's approval URL) are HMAC-SHA256 of the link's row id under the link
 * key: 32 bytes, base64url (43 chars), unguessable without SECRETS_KEY. Only
 * their SHA-256 is stored, so a database leak yields no usable link, and the
 * lookup is an exact match on the digest, which reveals nothing by timing.
 * Derived, not random, so the service can compute a link again while it is
 * open: a retried create answers the subscription it made with its URL
 * (create-subscription.ts), a change session shows its URL on GET.
 */
export function hashAuthorizationToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Cheap shape check before any lookup: tokens we issue are exactly 43 base64url characters. */
export const looksLikeAuthorizationToken = (value: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(value);

export function authorizationUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/authorize/${token}`;
}

/**
 * The key approval links are derived with: from SECRETS_KEY under its own label (not the key itself). A KeyObject,
 * made once: given a Buffer, every HMAC first checks it is not a KeyObject or a CryptoKey (1.5 % of a create's CPU).
 */
export function deriveLinkKey(secretsKey: Buffer): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync("sha256", secretsKey, Buffer.alloc(0), "approval-link-token-v1", 32)));
}

const linkToken = (linkKey: KeyObject, label: string): { token: string; hash: string } => {
  const token = createHmac("sha256", linkKey).update(label).digest("base64url");
  return { token, hash: hashAuthorizationToken(token) };
};

/**
 * A subscription authorization's link token, from the authorization's id.
 * (Authorizations created before tokens were derived hold a random token's
 * digest: theirs cannot be computed again, see authorizationUrlOf.)
 */
export const authorizationToken = (linkKey: KeyObject, authorizationId: string) => linkToken(linkKey, `authorization:${authorizationId}`);

/** A change session's link token, from the session's id. */
export const changeSessionToken = (linkKey: KeyObject, changeSessionId: string) => linkToken(linkKey, `change-session:${changeSessionId}`);

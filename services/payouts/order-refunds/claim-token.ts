import { createHash, createHmac, hkdfSync } from "node:crypto";

/**
 * The claim link of an order refund: {PUBLIC_BASE_URL}/claims/<token>. The
 * token is HMAC-SHA256 of the refund id under a key derived from SECRETS_KEY
 * (its own label), 43 base64url characters: unguessable without the key,
 * and the service can compute it again, so the merchant reads `claimUrl` on
 * every read while the claim is open. Only its SHA-256 is stored (lookup by
 * exact digest), so a database leak yields no usable link.
 */
export interface ClaimLinks {
  token(refundId: string): string;
  url(refundId: string): string;
}

export const hashClaimToken = (token: string): string => createHash("sha256").update(token).digest("hex");

/** Tokens we issue are exactly 43 base64url characters: anything else is not looked up. */
export const looksLikeClaimToken = (value: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(value);

export function claimLinks(secretsKey: Buffer, publicBaseUrl: string): ClaimLinks {
  const key = Buffer.from(hkdfSync("sha256", secretsKey, Buffer.alloc(0), "order-refund-claim-token-v1", 32));
  const token = (refundId: string) => createHmac("sha256", key).update(`order-refund:${refundId}`).digest("base64url");
  return { token, url: (refundId) => `${publicBaseUrl}/claims/${token(refundId)}` };
}

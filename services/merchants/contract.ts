import { createHash } from "node:crypto";

/**
 * What the gateway and the merchants service agree on (imports nothing from
 * the project): how an API key is hashed for lookup and the Redis channel on
 * which revocations are announced to every gateway's cache.
 */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export const keyRevocationChannel = (queuePrefix: string) => `${queuePrefix}:api-key-revoked`;

/** Bounds of a merchant's own rate limit (requests per second and bucket size), as for RATE_LIMIT_*. */
export const MERCHANT_RATE_LIMIT_MIN = 1;
export const MERCHANT_RATE_LIMIT_MAX = 100_000;

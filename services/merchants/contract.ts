/** What the gateway and the merchants service agree on (imports nothing). */

/** Bounds of a merchant's own rate limit (requests per second and bucket size), as for RATE_LIMIT_*. */
export const MERCHANT_RATE_LIMIT_MIN = 1;
export const MERCHANT_RATE_LIMIT_MAX = 100_000;

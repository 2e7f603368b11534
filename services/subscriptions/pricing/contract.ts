/** What the edge and the pricing use cases agree on (imports nothing). */
export const COUPON_DURATIONS = ["ONCE", "REPEATING", "FOREVER"] as const;
export type CouponDuration = (typeof COUPON_DURATIONS)[number];

export const DURATION_IN_PERIODS = { min: 1, max: 120 } as const;
export const COUPON_NAME_MAX = 200;
export const PROMOTION_CODE_PATTERN = "^[A-Za-z0-9-]{3,50}$";
export const PRORATIONS = ["NONE", "PRORATE"] as const;
export type Proration = (typeof PRORATIONS)[number];

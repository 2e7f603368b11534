/**
 * What the edge and the orders service agree on: statuses and input limits
 * (imports nothing). The status machine itself is order-status.ts.
 */
export const ORDER_STATUSES = ["PENDING", "UNDERPAID", "CONFIRMING", "PAID", "EXPIRED"] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
/** A credit to the merchant (payment_order_credits, a wallet call): PENDING until the wallet moved the money, then DONE. */
export const CREDIT_STATUSES = ["PENDING", "DONE"] as const;

export const EXPIRES_IN_MINUTES = { min: 5, max: 1440, default: 30 } as const;
export const CONFIRMATIONS_MAX = 1_000_000;

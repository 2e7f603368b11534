import type { RefundStatus } from "./contract.ts";

/**
 * The refund status machine, one table (docs/payments.md mirrors it). A refund is
 * born PENDING (its amount reserved against the charge); the wallet's answer
 * settles it once. SUCCEEDED and FAILED are final: a refused refund is never
 * retried as such, the merchant asks again (a new refund).
 */
export type RefundEvent =
  | "wallet_refunded" //           the wallet moved the money (or replayed that it had)
  | "merchant_balance_too_low"; // the wallet refused: nothing moved, the reservation ends

export const REFUND_TRANSITIONS: readonly { from: RefundStatus; event: RefundEvent; to: RefundStatus }[] = [
  { from: "PENDING", event: "wallet_refunded", to: "SUCCEEDED" },
  { from: "PENDING", event: "merchant_balance_too_low", to: "FAILED" },
];

/** The next status, or an Error for a move the table does not list (a bug: callers check PENDING under the lock). */
export function nextRefundStatus(from: RefundStatus, event: RefundEvent): RefundStatus {
  const move = REFUND_TRANSITIONS.find((t) => t.from === from && t.event === event);
  if (!move) throw new Error(`refund cannot go from ${from} on ${event}`);
  return move.to;
}

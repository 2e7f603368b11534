import { defineStatusMachine } from "../../platform/status-machine.ts";
import { ORDER_REFUND_STATUSES, type OrderRefundStatus } from "../contract.ts";

/**
 * The order refund status machine, one table (docs/payments.md mirrors it). A
 * refund moves with its payout, in the payout's transaction: OPENING and
 * REFUSED are never shown (the reservation is with the wallet, or the
 * balance was too low and nothing moved).
 */
export type OrderRefundEvent =
  | "reserved_awaiting_address" // amount + fee left the balance; the customer gives the address on the claim page
  | "reserved_with_address" //     the same, the merchant gave the address: the payout starts at once
  | "balance_too_low" //           the wallet refused the reservation: nothing moved
  | "claimed" //                   the customer gave an address on the claim page: the payout starts
  | "claim_expired" //             nobody claimed it in time: the money returns to the balance
  | "payout_paid" //               its payout reached its confirmations
  | "payout_failed"; //            its payout failed (or was cancelled): the money returns

export const orderRefundMachine = defineStatusMachine<OrderRefundStatus, OrderRefundEvent>("order refund", ORDER_REFUND_STATUSES, [
  { from: "OPENING", event: "reserved_awaiting_address", to: "AWAITING_ADDRESS" },
  { from: "OPENING", event: "reserved_with_address", to: "PROCESSING" },
  { from: "OPENING", event: "balance_too_low", to: "REFUSED" },
  { from: "AWAITING_ADDRESS", event: "claimed", to: "PROCESSING" },
  { from: "AWAITING_ADDRESS", event: "claim_expired", to: "EXPIRED" },
  { from: "PROCESSING", event: "payout_paid", to: "PAID" },
  { from: "PROCESSING", event: "payout_failed", to: "FAILED" },
]);

import { defineStatusMachine } from "../platform/status-machine.ts";
import { PAYOUT_STATUSES, type PayoutStatus } from "./contract.ts";

/**
 * The payout status machine, one table (docs/payments.md mirrors it). OPENING and
 * REFUSED are never shown to a merchant: a payout is visible from the moment
 * its amount + fee left the balance.
 */
type PayoutEvent =
  | "debited" //            the wallet moved amount + fee to the PAYOUTS account
  | "debited_for_review" // the same, for a payout worth more than the merchant's review threshold
  | "balance_too_low" //    the wallet refused: nothing moved
  | "submitted" //          the chain accepted the transfer (txHash known); from IN_REVIEW only once approved
  | "confirmed" //          the asset's confirmations reached
  | "chain_failed" //       the chain (or the sandbox) reported the transfer failed; money returns
  | "rejected" //           an operator rejected it in review; money returns
  | "cancelled" //          the merchant cancelled it before it reached the chain; money returns
  | "debited_awaiting_address" // an order refund's money reserved; the customer has not given an address yet
  | "address_given" //      the customer claimed the refund with an address
  | "claim_expired"; //     nobody claimed it in time; money returns

export const payoutMachine = defineStatusMachine<PayoutStatus, PayoutEvent>("payout", PAYOUT_STATUSES, [
  { from: "OPENING", event: "debited", to: "PENDING" },
  { from: "OPENING", event: "debited_for_review", to: "IN_REVIEW" },
  { from: "OPENING", event: "balance_too_low", to: "REFUSED" },
  { from: "OPENING", event: "debited_awaiting_address", to: "AWAITING_ADDRESS" },
  { from: "AWAITING_ADDRESS", event: "address_given", to: "PENDING" },
  { from: "AWAITING_ADDRESS", event: "claim_expired", to: "EXPIRED" },
  { from: "PENDING", event: "submitted", to: "PROCESSING" },
  { from: "PENDING", event: "chain_failed", to: "FAILED" },
  { from: "PENDING", event: "cancelled", to: "CANCELLED" },
  { from: "IN_REVIEW", event: "submitted", to: "PROCESSING" },
  { from: "IN_REVIEW", event: "chain_failed", to: "FAILED" },
  { from: "IN_REVIEW", event: "rejected", to: "FAILED" },
  { from: "PROCESSING", event: "confirmed", to: "PAID" },
  { from: "PROCESSING", event: "chain_failed", to: "FAILED" },
]);

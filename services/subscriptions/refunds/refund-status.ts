import { defineStatusMachine } from "../../platform/status-machine.ts";
import { REFUND_STATUSES, type RefundStatus } from "./contract.ts";

/**
 * The refund status machine, one table (docs/payments.md mirrors it). A refund is
 * born PENDING (its amount reserved against the charge); the wallet's answer
 * settles it once. SUCCEEDED and FAILED are final: a refused refund is never
 * retried as such, the merchant asks again (a new refund).
 */
type RefundEvent =
  | "wallet_refunded" //           the wallet moved the money (or replayed that it had)
  | "merchant_balance_too_low"; // the wallet refused: nothing moved, the reservation ends

/** A move the table does not list is a bug here (callers check PENDING under the lock); it still answers 409, never a 500. */
export const refundMachine = defineStatusMachine<RefundStatus, RefundEvent>("refund", REFUND_STATUSES, [
  { from: "PENDING", event: "wallet_refunded", to: "SUCCEEDED" },
  { from: "PENDING", event: "merchant_balance_too_low", to: "FAILED" },
]);

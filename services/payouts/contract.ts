/**
 * What the gateway and the payouts service agree on (imports nothing):
 * statuses, error codes, limits.
 */
export const DESTINATION_STATUSES = ["PENDING_ACTIVATION", "ACTIVE", "REMOVED"] as const;
export type DestinationStatus = (typeof DESTINATION_STATUSES)[number];

export const DESTINATION_LABEL_MAX_LENGTH = 200;
export const ADDRESS_MAX_LENGTH = 128;

/**
 * Every payout status. OPENING (the debit of amount + fee is with the
 * wallet) and REFUSED (the balance was too low: nothing moved) are never
 * shown: a merchant sees a payout once its money has left the balance.
 */
export const VISIBLE_PAYOUT_STATUSES = ["PENDING", "IN_REVIEW", "PROCESSING", "PAID", "FAILED", "CANCELLED"] as const;
/**
 * AWAITING_ADDRESS and EXPIRED belong to order refunds waiting for the
 * customer's address (the money is reserved; the payout has no address yet)
 * and never shown as payouts: the order refund shows them.
 */
export const PAYOUT_STATUSES = ["OPENING", "REFUSED", "AWAITING_ADDRESS", "EXPIRED", ...VISIBLE_PAYOUT_STATUSES] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** What asked for a payout: the merchant (POST /api/v1/payouts), or an order refund paid to a customer. */
export const PAYOUT_SOURCES = ["MERCHANT", "ORDER_REFUND"] as const;
export type PayoutSource = (typeof PAYOUT_SOURCES)[number];

export const PAYOUT_FAILURE_REASON_MAX_LENGTH = 500;
/** The failureReason of a payout an operator rejected in review. */
export const REJECTED_REASON = "REJECTED";

export const PAYOUT_ERRORS = {
  destinationNotFound: "DESTINATION_NOT_FOUND",
  destinationExists: "DESTINATION_EXISTS",
  destinationNotActive: "DESTINATION_NOT_ACTIVE",
  merchantBalanceInsufficient: "MERCHANT_BALANCE_INSUFFICIENT",
  payoutNotFound: "PAYOUT_NOT_FOUND",
  payoutsUnavailable: "PAYOUTS_UNAVAILABLE",
  inProgress: "PAYOUT_IN_PROGRESS",
  orderNotFound: "PAYMENT_ORDER_NOT_FOUND",
  orderNotRefundable: "ORDER_NOT_REFUNDABLE",
  refundExceedsPayment: "REFUND_EXCEEDS_PAYMENT",
  refundInProgress: "REFUND_IN_PROGRESS",
} as const;

/** Order refund statuses; OPENING (its reservation is with the wallet) and REFUSED (the balance was too low) are never shown. */
export const VISIBLE_ORDER_REFUND_STATUSES = ["AWAITING_ADDRESS", "PROCESSING", "PAID", "FAILED", "EXPIRED"] as const;
export const ORDER_REFUND_STATUSES = ["OPENING", "REFUSED", ...VISIBLE_ORDER_REFUND_STATUSES] as const;
export type OrderRefundStatus = (typeof ORDER_REFUND_STATUSES)[number];
/** Statuses whose amount counts as refunded (given, or on its way): the order's amountRefunded (orders/entities.ts) and the bound on new refunds. */
export const COUNTED_REFUND_STATUSES: readonly OrderRefundStatus[] = ["OPENING", "AWAITING_ADDRESS", "PROCESSING", "PAID"];

/** How long a claim link is valid (minutes): default one week, at most 30 days. */
export const CLAIM_EXPIRES_DEFAULT_MINUTES = 10080;
export const CLAIM_EXPIRES_MIN_MINUTES = 5;
export const CLAIM_EXPIRES_MAX_MINUTES = 43200;

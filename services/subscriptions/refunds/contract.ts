/**
 * What the gateway and the refunds use cases agree on (imports nothing):
 * limits, the statuses a merchant can see, the error codes.
 */
export const REFUND_REASON_MAX_LENGTH = 500;

/** PENDING only while the wallet moves the money (a second at most); FAILED attempts are never shown. */
export const VISIBLE_REFUND_STATUSES = ["PENDING", "SUCCEEDED"] as const;
export const REFUND_STATUSES = [...VISIBLE_REFUND_STATUSES, "FAILED"] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

export const REFUND_ERRORS = {
  chargeNotFound: "CHARGE_NOT_FOUND",
  chargeNotRefundable: "CHARGE_NOT_REFUNDABLE",
  exceedsCharge: "REFUND_EXCEEDS_CHARGE",
  merchantBalanceInsufficient: "MERCHANT_BALANCE_INSUFFICIENT",
  refundNotFound: "REFUND_NOT_FOUND",
  inProgress: "REFUND_IN_PROGRESS",
} as const;

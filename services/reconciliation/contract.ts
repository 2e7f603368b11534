/** What the edge and the reconciliation agree on (imports nothing). */
export const ANOMALY_KINDS = [
  "MONEY_WITHOUT_SUCCEEDED_OWNER",
  "SUCCEEDED_OWNER_WITHOUT_MONEY",
  "AMOUNT_MISMATCH",
  "PARKED_ROW",
  "STALE_PENDING_ROW",
  "CHARGE_WITHOUT_BILLED_PERIOD",
  "PAYOUT_PAID_TWICE",
] as const;
export type AnomalyKind = (typeof ANOMALY_KINDS)[number];
export const OWNER_TYPES = [
  "subscription_charge",
  "order_credit",
  "refund",
  "payout",
  "payout_reversal",
  "payout_call",
  "payouts_account",
  "order_refund",
  "order_refund_return",
] as const;
export type OwnerType = (typeof OWNER_TYPES)[number];
export const RECONCILIATION_STATUSES = ["ok", "anomalies"] as const;

/**
 * What the gateway and the wallet agree on about a merchant's balance
 * history (imports nothing). Each ledger movement kind that touches a
 * merchant's account shows as one balance-transaction type.
 */
export const BALANCE_TRANSACTION_TYPES = ["SUBSCRIPTION_CHARGE", "REFUND", "PAYMENT_ORDER", "ADJUSTMENT"] as const;
export type BalanceTransactionType = (typeof BALANCE_TRANSACTION_TYPES)[number];

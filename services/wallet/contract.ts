/**
 * What the edge and the wallet service agree on: asset codes, the limits of
 * wallet-user fields, and the balance-history types. Imports nothing, so the
 * gateway can use it without loading the wallet's entities or use cases.
 */
export const ASSET_CODES = ["USDT_TRON", "USDC_ETH", "BTC", "ETH"] as const;
export type AssetCode = (typeof ASSET_CODES)[number];

export const PASSWORD_MIN = 1;
export const PASSWORD_MAX = 200;

/** Each ledger movement kind that touches a merchant's account shows as one balance-transaction type. */
export const BALANCE_TRANSACTION_TYPES = ["SUBSCRIPTION_CHARGE", "REFUND", "PAYMENT_ORDER", "ADJUSTMENT"] as const;
export type BalanceTransactionType = (typeof BALANCE_TRANSACTION_TYPES)[number];

/** Items one ChargeBatch call may carry. */
export const CHARGE_BATCH_MAX = 500;

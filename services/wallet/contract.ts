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
export const BALANCE_TRANSACTION_TYPES = ["SUBSCRIPTION_CHARGE", "REFUND", "PAYMENT_ORDER", "PAYOUT", "PAYOUT_REVERSAL", "ORDER_REFUND", "ADJUSTMENT"] as const;
export type BalanceTransactionType = (typeof BALANCE_TRANSACTION_TYPES)[number];

/** Items one ChargeBatch call may carry. */
export const CHARGE_BATCH_MAX = 500;

/**
 * The idempotency keys other services move money under, built and parsed
 * only here: every key names its source (the row that owns the movement),
 * so reconciliation and the balance history find the owner from the key and
 * the ledger needs no column other domains would have to fill.
 */
export const LEDGER_KEY_PREFIXES = {
  subscriptionCharge: "subscription-charge-",
  refund: "refund-",
  paymentOrder: "payment-order-",
  payoutDebit: "payout-debit-",
  payoutReversal: "payout-reversal-",
  orderRefund: "order-refund-",
  orderRefundReturn: "order-refund-return-",
} as const;

export const ledgerKeys = {
  subscriptionCharge: (chargeId: string) => `${LEDGER_KEY_PREFIXES.subscriptionCharge}${chargeId}`,
  refund: (refundId: string) => `${LEDGER_KEY_PREFIXES.refund}${refundId}`,
  /** The credit that settles a PAID order: keyed by the order, so it happens once. */
  orderCredit: (orderId: string) => `${LEDGER_KEY_PREFIXES.paymentOrder}${orderId}`,
  /** A transfer outside that credit (more after PAID, late, or on an expired order). */
  orderPaymentCredit: (orderId: string, paymentId: string) => `${LEDGER_KEY_PREFIXES.paymentOrder}${orderId}-payment-${paymentId}`,
  /** A payout's amount + fee leaving the merchant's balance: keyed by the payout, so it happens once. */
  payoutDebit: (payoutId: string) => `${LEDGER_KEY_PREFIXES.payoutDebit}${payoutId}`,
  /** The same money back when the payout FAILED or was CANCELLED. */
  payoutReversal: (payoutId: string) => `${LEDGER_KEY_PREFIXES.payoutReversal}${payoutId}`,
  /** An order refund's amount + fee reserved from the balance (ledger kind ORDER_REFUND): keyed by the refund. */
  orderRefund: (refundId: string) => `${LEDGER_KEY_PREFIXES.orderRefund}${refundId}`,
  /** The same money back: the claim expired or the refund's payout failed (ORDER_REFUND, positive). */
  orderRefundReturn: (refundId: string) => `${LEDGER_KEY_PREFIXES.orderRefundReturn}${refundId}`,
} as const;

type LedgerKeySource = "subscription_charge" | "refund" | "payment_order" | "payout" | "order_refund";

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const KEY_PATTERNS: readonly { pattern: RegExp; source: LedgerKeySource }[] = [
  { pattern: new RegExp(`^${LEDGER_KEY_PREFIXES.subscriptionCharge}(${UUID})$`), source: "subscription_charge" },
  { pattern: new RegExp(`^${LEDGER_KEY_PREFIXES.refund}(${UUID})$`), source: "refund" },
  { pattern: new RegExp(`^${LEDGER_KEY_PREFIXES.paymentOrder}(${UUID})(?:-payment-${UUID})?$`), source: "payment_order" },
  { pattern: new RegExp(`^${LEDGER_KEY_PREFIXES.payoutDebit}(${UUID})$`), source: "payout" },
  { pattern: new RegExp(`^${LEDGER_KEY_PREFIXES.payoutReversal}(${UUID})$`), source: "payout" },
  { pattern: new RegExp(`^${LEDGER_KEY_PREFIXES.orderRefund}(${UUID})$`), source: "order_refund" },
  { pattern: new RegExp(`^${LEDGER_KEY_PREFIXES.orderRefundReturn}(${UUID})$`), source: "order_refund" },
];

/** The ledger kind a payout debit or reversal is posted as: ORDER_REFUND for an order refund's keys, else PAYOUT / PAYOUT_REVERSAL. */
export const isOrderRefundKey = (key: string): boolean => parseLedgerKey(key)?.source === "order_refund";

/** The owner a key names (for an order's payment credits: the order), or undefined for a key of no known source. */
export function parseLedgerKey(key: string | null): { source: LedgerKeySource; ownerId: string } | undefined {
  if (!key) return undefined;
  for (const { pattern, source } of KEY_PATTERNS) {
    const match = pattern.exec(key);
    if (match) return { source, ownerId: match[1]! };
  }
  return undefined;
}

/**
 * SQL: the owner id a ledger key of `prefix` names, from the column `column`
 * (reconciliation matches ledger rows to their owners by it).
 */
export const ledgerKeyOwnerSql = (column: string, prefix: string) => `substring(${column} from ${prefix.length + 1})`;

/**
 * SQL: the same owner id as a uuid, or null when the key does not name one
 * (a typed value joins on the owner's primary key: comparing `owner.id::text`
 * with text can use no index, and with the planner's guess of one row for a
 * key prefix it became a nested loop over every pair, quadratic in history).
 */
export const ledgerKeyOwnerUuidSql = (column: string, prefix: string) =>
  `case when ${column} ~ '^${prefix}${UUID}$' then substring(${column} from ${prefix.length + 1})::uuid end`;

/**
 * SQL: true when the column `column` is a key of `prefix` naming one owner
 * id and nothing more (the pattern parseLedgerKey uses): where one prefix
 * starts another ("order-refund-" and "order-refund-return-"), `like` would
 * match both.
 */
export const ledgerKeyMatchesSql = (column: string, prefix: string) => `${column} ~ '^${prefix}${UUID}$'`;

/** A wallet user's statuses (the machine: wallet-user-status.ts). */
export const WALLET_USER_STATUSES = ["ACTIVE", "FROZEN"] as const;
export type WalletUserStatus = (typeof WALLET_USER_STATUSES)[number];

import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { formatAmount } from "../platform/money.ts";
import { clampLimit, decodeCursor, toPage, type Page } from "../platform/pagination.ts";
import type { TransactionKind } from "./entities.ts";
import { BALANCE_TRANSACTION_TYPES, parseLedgerKey, type BalanceTransactionType } from "./contract.ts";
import { requireAsset, requireUuid } from "./wallet-input.ts";
import { merchantEntriesNewestFirst, type BalanceTransactionFilter, type BalanceTransactionRow } from "./balance-transaction-store.ts";

export interface BalanceTransactionView {
  /** The ledger entry on the merchant's account. */
  id: string;
  type: BalanceTransactionType;
  asset: string;
  /** Signed, canonical: negative left the merchant's account. */
  amount: string;
  balanceAfter: string;
  sourceType: string | null;
  sourceId: string | null;
  transactionId: string;
  createdAt: Date;
}

interface ListBalanceTransactionsInput {
  merchantId: string;
  asset?: string | undefined;
  type?: string | undefined;
  createdAfter?: Date | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

const TYPE_OF_KIND: Record<TransactionKind, BalanceTransactionType> = {
  CHARGE: "SUBSCRIPTION_CHARGE",
  REFUND: "REFUND",
  MERCHANT_CREDIT: "PAYMENT_ORDER",
  PAYOUT: "PAYOUT",
  PAYOUT_REVERSAL: "PAYOUT_REVERSAL",
  // An order refund's amount + fee reserved (negative), or given back when its claim expired or its payout failed (positive).
  ORDER_REFUND: "ORDER_REFUND",
  // Never on a merchant account today; an operator correction would show as this.
  WALLET_CREDIT: "ADJUSTMENT",
};

/** What the movement was for, read from its idempotency key (wallet/contract.ts ledgerKeys). */
function sourceOf(key: string | null): { sourceType: string | null; sourceId: string | null } {
  const parsed = parseLedgerKey(key);
  return parsed ? { sourceType: parsed.source, sourceId: parsed.ownerId } : { sourceType: null, sourceId: null };
}

/**
 * Every ledger entry on the merchant's accounts, newest first (keyset on the
 * entry's time and id): signed amount and the account's balance right after.
 * Summed per asset they give the account's balance (the ledger check proves
 * the cached balance equals that sum).
 */
export async function listBalanceTransactions(ctx: UseCaseContext, input: ListBalanceTransactionsInput): Promise<Page<BalanceTransactionView>> {
  const merchantId = requireUuid("merchantId", input.merchantId);
  const filter: BalanceTransactionFilter = { merchantId };
  if (input.asset !== undefined) filter.asset = requireAsset(input.asset).code;
  if (input.type !== undefined) {
    if (!(BALANCE_TRANSACTION_TYPES as readonly string[]).includes(input.type)) {
      throw invalid("INVALID_REQUEST", `type: must be one of ${BALANCE_TRANSACTION_TYPES.join(", ")}`);
    }
    // A type no movement has (ADJUSTMENT today) lists nothing.
    filter.kinds = Object.entries(TYPE_OF_KIND)
      .filter(([, type]) => type === input.type)
      .map(([kind]) => kind);
  }
  if (input.createdAfter !== undefined) filter.createdAfter = input.createdAfter;
  if (input.cursor) filter.before = decodeCursor(input.cursor);
  const limit = clampLimit(input.limit);
  const rows = await merchantEntriesNewestFirst(ctx.em, filter, limit + 1);
  return toPage(rows.map(balanceTransactionView), limit);
}

/** The one mapping of a merchant's ledger entry row to a balance transaction (the list, the export). */
export function balanceTransactionView(r: BalanceTransactionRow): BalanceTransactionView {
  return {
    id: r.id,
    type: TYPE_OF_KIND[r.kind],
    asset: r.asset,
    amount: formatAmount(r.amount),
    balanceAfter: formatAmount(r.balance_after),
    ...sourceOf(r.idempotency_key),
    transactionId: r.transaction_id,
    createdAt: new Date(r.created_at),
  };
}

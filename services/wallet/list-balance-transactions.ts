import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { formatAmount } from "../platform/money.ts";
import { clampLimit, decodeCursor, toPage, type Page } from "../platform/pagination.ts";
import type { TransactionKind } from "./entities.ts";
import { BALANCE_TRANSACTION_TYPES, parseLedgerKey, type BalanceTransactionType } from "./contract.ts";
import { requireAsset, requireUuid } from "./wallet-input.ts";

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

export interface ListBalanceTransactionsInput {
  merchantId: string;
  asset?: string | undefined;
  type?: string | undefined;
  createdAfter?: Date | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

export const TYPE_OF_KIND: Record<TransactionKind, BalanceTransactionType> = {
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
export function sourceOf(key: string | null): { sourceType: string | null; sourceId: string | null } {
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
  const where = ["a.owner_type = 'MERCHANT'", "a.owner_id = ?"];
  const params: unknown[] = [merchantId];
  if (input.asset !== undefined) {
    where.push("a.asset = ?");
    params.push(requireAsset(input.asset).code);
  }
  if (input.type !== undefined) {
    if (!(BALANCE_TRANSACTION_TYPES as readonly string[]).includes(input.type)) {
      throw invalid("INVALID_REQUEST", `type: must be one of ${BALANCE_TRANSACTION_TYPES.join(", ")}`);
    }
    const kinds = Object.entries(TYPE_OF_KIND)
      .filter(([, type]) => type === input.type)
      .map(([kind]) => kind);
    // A type no movement has (ADJUSTMENT today) lists nothing.
    if (kinds.length === 0) where.push("false");
    else {
      where.push(`t.kind in (${kinds.map(() => "?").join(", ")})`);
      params.push(...kinds);
    }
  }
  if (input.createdAfter !== undefined) {
    where.push("e.created_at > ?");
    params.push(input.createdAfter);
  }
  if (input.cursor) {
    const key = decodeCursor(input.cursor);
    where.push("(e.created_at < ? or (e.created_at = ? and e.id < ?))");
    params.push(key.createdAt, key.createdAt, key.id);
  }
  const limit = clampLimit(input.limit);
  const rows = await ctx.em.execute<LedgerEntryRow[]>(
    `select e.id, e.transaction_id, e.asset, e.amount::text as amount, e.balance_after::text as balance_after, e.created_at, t.kind, t.idempotency_key
       from ledger_entries e
       join ledger_accounts a on a.id = e.account_id
       join ledger_transactions t on t.id = e.transaction_id
      where ${where.join(" and ")}
      order by e.created_at desc, e.id desc
      limit ?`,
    [...params, limit + 1],
  );
  return toPage(rows.map(balanceTransactionView), limit);
}

/** A ledger entry of a merchant account with its transaction's kind and key, as the list and the export read it. */
export interface LedgerEntryRow {
  id: string;
  transaction_id: string;
  asset: string;
  amount: string;
  balance_after: string;
  created_at: Date;
  kind: TransactionKind;
  idempotency_key: string | null;
}

/** The one mapping of such a row to a balance transaction (the list, the export). */
export function balanceTransactionView(r: LedgerEntryRow): BalanceTransactionView {
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

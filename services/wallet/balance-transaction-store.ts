import type { EntityManager } from "@mikro-orm/postgresql";
import type { TransactionKind } from "./entities.ts";

/**
 * A merchant's balance transactions: the ledger entries on its accounts, each
 * with its transaction's kind and key (list-balance-transactions.ts and the
 * CSV export read them).
 */
export interface BalanceTransactionRow {
  id: string;
  transaction_id: string;
  asset: string;
  amount: string;
  balance_after: string;
  created_at: Date;
  kind: TransactionKind;
  idempotency_key: string | null;
}

export interface BalanceTransactionFilter {
  merchantId: string;
  asset?: string | undefined;
  /** The kinds to list; empty lists nothing (a type no movement has). */
  kinds?: string[] | undefined;
  createdAfter?: Date | undefined;
  /** The keyset: entries strictly older than this one. */
  before?: { createdAt: Date; id: string } | undefined;
}

/** Newest first (keyset on the entry's time and id), at most `rows` of them. */
export async function merchantEntriesNewestFirst(em: EntityManager, filter: BalanceTransactionFilter, rows: number): Promise<BalanceTransactionRow[]> {
  const where = ["a.owner_type = 'MERCHANT'", "a.owner_id = ?"];
  const params: unknown[] = [filter.merchantId];
  if (filter.asset !== undefined) {
    where.push("a.asset = ?");
    params.push(filter.asset);
  }
  if (filter.kinds !== undefined) {
    if (filter.kinds.length === 0) where.push("false");
    else {
      where.push(`t.kind in (${filter.kinds.map(() => "?").join(", ")})`);
      params.push(...filter.kinds);
    }
  }
  if (filter.createdAfter !== undefined) {
    where.push("e.created_at > ?");
    params.push(filter.createdAfter);
  }
  if (filter.before) {
    where.push("(e.created_at < ? or (e.created_at = ? and e.id < ?))");
    params.push(filter.before.createdAt, filter.before.createdAt, filter.before.id);
  }
  return em.execute<BalanceTransactionRow[]>(
    `select e.id, e.transaction_id, e.asset, e.amount::text as amount, e.balance_after::text as balance_after, e.created_at, t.kind, t.idempotency_key
       from ledger_entries e
       join ledger_accounts a on a.id = e.account_id
       join ledger_transactions t on t.id = e.transaction_id
      where ${where.join(" and ")}
      order by e.created_at desc, e.id desc
      limit ?`,
    [...params, rows],
  );
}

/** The merchant's accounts (one per asset, a handful), in asset order, from `fromAsset` on when given. */
export async function merchantAccountsByAsset(em: EntityManager, merchantId: string, fromAsset?: string): Promise<{ id: string; asset: string }[]> {
  return em.execute<{ id: string; asset: string }[]>(
    `select id, asset from ledger_accounts where owner_type = 'MERCHANT' and owner_id = ? ${fromAsset !== undefined ? "and asset >= ?" : ""} order by asset`,
    fromAsset !== undefined ? [merchantId, fromAsset] : [merchantId],
  );
}

export interface ExportedEntryRow extends BalanceTransactionRow {
  /** created_at to the microsecond, as the next batch's key (a Date keeps only milliseconds). */
  key_at: string;
}

/**
 * One account's entries created in [from, to), oldest first, after `after`
 * (time to the microsecond, id) when given: one range scan of
 * ledger_entries_account_keyset_idx.
 */
export async function accountEntriesOldestFirst(
  em: EntityManager,
  account: { id: string; asset: string },
  period: { from: Date; to: Date },
  after: { at: string; id: string } | undefined,
  rows: number,
): Promise<ExportedEntryRow[]> {
  return em.execute<ExportedEntryRow[]>(
    `select to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as key_at, e.id, e.transaction_id, e.amount::text as amount, e.balance_after::text as balance_after, e.created_at, t.kind, t.idempotency_key, ? as asset
           from ledger_entries e
           join ledger_transactions t on t.id = e.transaction_id
          where e.account_id = ? and e.created_at >= ? and e.created_at < ? ${after ? "and (e.created_at, e.id) > (?::timestamptz, ?)" : ""}
          order by e.created_at, e.id
          limit ?`,
    [account.asset, account.id, period.from, period.to, ...(after ? [after.at, after.id] : []), rows],
  );
}

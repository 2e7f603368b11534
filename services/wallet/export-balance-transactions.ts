import type { UseCaseContext } from "../platform/use-case.ts";
import { decodeExportKey, encodeExportKey, exportBatchSize, exportPeriod, EXACT_INSTANT, UUID_TEXT } from "../platform/export-batches.ts";
import { balanceTransactionView, type BalanceTransactionView, type LedgerEntryRow } from "./list-balance-transactions.ts";
import { requireUuid } from "./wallet-input.ts";

interface EntryRow extends LedgerEntryRow {
  /** created_at to the microsecond, as the next batch's key (a Date keeps only milliseconds). */
  key_at: string;
}

/**
 * One batch of the merchant's movements created in [from, to): by account
 * (one per asset, in asset order), then oldest first, so each batch is one
 * range scan of ledger_entries_account_keyset_idx per account, after the
 * previous batch's last key (asset, time, id), and each asset's balanceAfter reads
 * down the rows like a statement.
 */
export async function exportBalanceTransactions(
  ctx: UseCaseContext,
  input: { merchantId: string; from?: Date | undefined; to?: Date | undefined; after?: string | undefined; limit?: number | undefined },
): Promise<{ transactions: BalanceTransactionView[]; next: string | undefined }> {
  const merchantId = requireUuid("merchantId", input.merchantId);
  const { from, to } = exportPeriod(input.from, input.to);
  const limit = exportBatchSize(input.limit);
  let key: { asset: string; at: string; id: string } | undefined;
  if (input.after) {
    const [asset, at, id] = decodeExportKey(input.after, [/^[A-Z0-9_]{1,16}$/, EXACT_INSTANT, UUID_TEXT]);
    key = { asset: asset!, at: at!, id: id! };
  }
  // Account by account (a merchant has one per asset, a handful): each query walks one account's index range.
  const accounts = await ctx.em.execute<{ id: string; asset: string }[]>(
    `select id, asset from ledger_accounts where owner_type = 'MERCHANT' and owner_id = ? ${key ? "and asset >= ?" : ""} order by asset`,
    key ? [merchantId, key.asset] : [merchantId],
  );
  const rows: EntryRow[] = [];
  for (const account of accounts) {
    if (rows.length >= limit) break;
    const resume = key && key.asset === account.asset;
    rows.push(
      ...(await ctx.em.execute<EntryRow[]>(
        `select to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as key_at, e.id, e.transaction_id, e.amount::text as amount, e.balance_after::text as balance_after, e.created_at, t.kind, t.idempotency_key, ? as asset
           from ledger_entries e
           join ledger_transactions t on t.id = e.transaction_id
          where e.account_id = ? and e.created_at >= ? and e.created_at < ? ${resume ? "and (e.created_at, e.id) > (?::timestamptz, ?)" : ""}
          order by e.created_at, e.id
          limit ?`,
        [account.asset, account.id, from, to, ...(resume ? [key!.at, key!.id] : []), limit - rows.length],
      )),
    );
  }
  const transactions = rows.map(balanceTransactionView);
  const last = rows.at(-1);
  return { transactions, next: rows.length === limit && last ? encodeExportKey([last.asset, last.key_at, last.id]) : undefined };
}

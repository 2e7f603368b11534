import type { UseCaseContext } from "../platform/use-case.ts";
import { decodeExportKey, encodeExportKey, exportBatchSize, exportPeriod, EXACT_INSTANT, UUID_TEXT } from "../platform/export-batches.ts";
import { balanceTransactionView, type BalanceTransactionView } from "./list-balance-transactions.ts";
import { requireUuid } from "./wallet-input.ts";
import { accountEntriesOldestFirst, merchantAccountsByAsset, type ExportedEntryRow } from "./balance-transaction-store.ts";

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
  const accounts = await merchantAccountsByAsset(ctx.em, merchantId, key?.asset);
  const rows: ExportedEntryRow[] = [];
  for (const account of accounts) {
    if (rows.length >= limit) break;
    const resume = key && key.asset === account.asset;
    rows.push(...(await accountEntriesOldestFirst(ctx.em, account, { from, to }, resume ? key : undefined, limit - rows.length)));
  }
  const transactions = rows.map(balanceTransactionView);
  const last = rows.at(-1);
  return { transactions, next: rows.length === limit && last ? encodeExportKey([last.asset, last.key_at, last.id]) : undefined };
}

import type { UseCaseContext } from "../platform/use-case.ts";
import { formatAmount } from "../platform/money.ts";
import { isUuid } from "../platform/ids.ts";
import { invalid } from "../platform/errors.ts";
import { decodeExportKey, encodeExportKey, exportBatchSize, exportPeriod, EXACT_INSTANT, UUID_TEXT } from "../platform/export-batches.ts";

export interface ExportedChargeView {
  id: string;
  subscriptionId: string;
  walletUserId: string;
  createdAt: Date;
  settledAt: Date | null;
  status: string;
  failureReason: string | null;
  purpose: string;
  currency: string;
  amount: string;
  asset: string;
  assetAmount: string | null;
  rate: string | null;
  amountRefunded: string;
  assetAmountRefunded: string;
  receiptNumber: string | null;
}

interface Row {
  /** created_at to the microsecond, as the next batch's key (a Date keeps only milliseconds). */
  key_at: string;
  id: string;
  subscription_id: string;
  wallet_user_id: string;
  created_at: Date;
  settled_at: Date | null;
  status: string;
  failure_reason: string | null;
  purpose: string;
  currency: string;
  amount: string;
  asset: string;
  asset_amount: string | null;
  rate: string | null;
  amount_refunded: string;
  asset_amount_refunded: string;
  receipt_number: string | null;
}

/**
 * One batch of the merchant's charges created in [from, to), oldest first on
 * (created_at, id): one range scan of subscription_charges_merchant_created_idx
 * after the previous batch's last key (migration 0031).
 */
export async function exportCharges(
  ctx: UseCaseContext,
  input: { merchantId: string; from?: Date | undefined; to?: Date | undefined; after?: string | undefined; limit?: number | undefined },
): Promise<{ charges: ExportedChargeView[]; next: string | undefined }> {
  if (!isUuid(input.merchantId)) throw invalid("INVALID_REQUEST", "merchantId: must be a uuid");
  const { from, to } = exportPeriod(input.from, input.to);
  const limit = exportBatchSize(input.limit);
  const params: unknown[] = [input.merchantId, from, to];
  let after = "";
  if (input.after) {
    const [at, id] = decodeExportKey(input.after, [EXACT_INSTANT, UUID_TEXT]);
    after = "and (created_at, id) > (?::timestamptz, ?)";
    params.push(at, id);
  }
  const rows = await ctx.em.execute<Row[]>(
    `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as key_at, id, subscription_id, wallet_user_id, created_at, settled_at, status, failure_reason, purpose, currency,
            amount::text as amount, asset, asset_amount::text as asset_amount, rate::text as rate,
            amount_refunded::text as amount_refunded, asset_amount_refunded::text as asset_amount_refunded, receipt_number
       from subscription_charges
      where merchant_id = ? and created_at >= ? and created_at < ? ${after}
      order by created_at, id
      limit ?`,
    [...params, limit],
  );
  const charges = rows.map((r) => ({
    id: r.id,
    subscriptionId: r.subscription_id,
    walletUserId: r.wallet_user_id,
    createdAt: new Date(r.created_at),
    settledAt: r.settled_at ? new Date(r.settled_at) : null,
    status: r.status,
    failureReason: r.failure_reason,
    purpose: r.purpose,
    currency: r.currency,
    amount: formatAmount(r.amount),
    asset: r.asset,
    assetAmount: r.asset_amount === null ? null : formatAmount(r.asset_amount),
    rate: r.rate === null ? null : formatAmount(r.rate),
    amountRefunded: formatAmount(r.amount_refunded),
    assetAmountRefunded: formatAmount(r.asset_amount_refunded),
    receiptNumber: r.receipt_number,
  }));
  const last = rows.at(-1);
  return { charges, next: rows.length === limit && last ? encodeExportKey([last.key_at, last.id]) : undefined };
}

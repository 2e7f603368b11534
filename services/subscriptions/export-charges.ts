import type { UseCaseContext } from "../platform/use-case.ts";
import { formatAmount } from "../platform/money.ts";
import { isUuid } from "../platform/ids.ts";
import { invalid } from "../platform/errors.ts";
import { chargesCreatedBetween } from "./charges/charge-store.ts";
import { decodeExportKey, encodeExportKey, exportBatchSize, exportPeriod, EXACT_INSTANT, UUID_TEXT } from "../platform/export-batches.ts";

interface ExportedChargeView {
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

/**
 * One batch of the merchant's charges created in [from, to), oldest first on
 * (created_at, id), after the previous batch's last key (chargesCreatedBetween).
 */
export async function exportCharges(
  ctx: UseCaseContext,
  input: { merchantId: string; from?: Date | undefined; to?: Date | undefined; after?: string | undefined; limit?: number | undefined },
): Promise<{ charges: ExportedChargeView[]; next: string | undefined }> {
  if (!isUuid(input.merchantId)) throw invalid("INVALID_REQUEST", "merchantId: must be a uuid");
  const { from, to } = exportPeriod(input.from, input.to);
  const limit = exportBatchSize(input.limit);
  let after: { at: string; id: string } | undefined;
  if (input.after) {
    const [at, id] = decodeExportKey(input.after, [EXACT_INSTANT, UUID_TEXT]);
    after = { at: at!, id: id! };
  }
  const rows = await chargesCreatedBetween(ctx.em, input.merchantId, from, to, after, limit);
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

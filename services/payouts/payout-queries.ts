import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { formatAmount } from "../platform/money.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../platform/pagination.ts";
import { VISIBLE_PAYOUT_STATUSES } from "./contract.ts";
import { Payout, type PayoutRow } from "./entities.ts";
import { payoutNotFound } from "./payout-actions.ts";
import { moneyInFlightByAsset } from "./payout-store.ts";

export async function getPayout(ctx: UseCaseContext, merchantId: string | undefined, id: string): Promise<PayoutRow> {
  if (!isUuid(id)) throw payoutNotFound(id);
  const row = await ctx.em.findOne(Payout, {
    id: id.toLowerCase(),
    ...(merchantId === undefined ? {} : { merchantId }),
    status: { $in: [...VISIBLE_PAYOUT_STATUSES] },
  });
  if (!row) throw payoutNotFound(id);
  return row;
}

interface ListPayoutsInput {
  /** Undefined: every merchant's (the operator's list). */
  merchantId?: string | undefined;
  status?: string | undefined;
  destinationId?: string | undefined;
  asset?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/** Newest first (keyset), visible payouts only. */
export async function listPayouts(ctx: UseCaseContext, input: ListPayoutsInput): Promise<Page<PayoutRow>> {
  const where: Record<string, unknown> = { ...afterCursor(input.cursor), status: { $in: [...VISIBLE_PAYOUT_STATUSES] } };
  if (input.merchantId !== undefined) {
    if (!isUuid(input.merchantId)) throw invalid("INVALID_REQUEST", "merchantId: must be a uuid");
    where.merchantId = input.merchantId.toLowerCase();
  }
  if (input.status !== undefined) {
    if (!(VISIBLE_PAYOUT_STATUSES as readonly string[]).includes(input.status))
      throw invalid("INVALID_REQUEST", `status: must be one of ${VISIBLE_PAYOUT_STATUSES.join(", ")}`);
    where.status = input.status;
  }
  if (input.destinationId !== undefined) {
    if (!isUuid(input.destinationId)) throw invalid("INVALID_REQUEST", "destinationId: must be a uuid");
    where.destinationId = input.destinationId.toLowerCase();
  }
  if (input.asset !== undefined) where.asset = input.asset;
  const limit = clampLimit(input.limit);
  const rows = await ctx.em.find(Payout, where, { orderBy: KEYSET_ORDER, limit: limit + 1 });
  return toPage(rows, limit);
}

/**
 * Money of the merchant's payouts that has left its available balance and
 * is neither on the chain for good (PAID) nor back (reversed), per asset:
 * PENDING, IN_REVIEW and PROCESSING payouts, and FAILED/CANCELLED ones whose
 * reversal is still on its way. Assets with nothing in flight are left out.
 */
export async function pendingBalance(ctx: UseCaseContext, merchantId: string): Promise<{ asset: string; amount: string }[]> {
  const rows = await moneyInFlightByAsset(ctx.em, merchantId);
  return rows.map((r) => ({ asset: r.asset, amount: formatAmount(r.amount) }));
}

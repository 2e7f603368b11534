import type { UseCaseContext } from "../platform/use-case.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../platform/pagination.ts";
import { ApiKey, type ApiKeyRow } from "./entities.ts";
import { getMerchant } from "./get-merchant.ts";

/** A merchant's keys, revoked ones too, newest first (keyset). 404 MERCHANT_NOT_FOUND for an unknown merchant. */
export async function listApiKeys(
  ctx: UseCaseContext,
  input: { merchantId: string; limit?: number | undefined; cursor?: string | undefined },
): Promise<Page<ApiKeyRow>> {
  await getMerchant(ctx, input.merchantId);
  const limit = clampLimit(input.limit);
  const rows = await ctx.em.find(ApiKey, { merchantId: input.merchantId, ...afterCursor(input.cursor) }, { orderBy: KEYSET_ORDER, limit: limit + 1 });
  return toPage(rows, limit);
}

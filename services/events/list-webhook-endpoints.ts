import type { FilterQuery } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../platform/pagination.ts";
import { WebhookEndpoint, type WebhookEndpointRow } from "./webhook-entities.ts";

export async function listWebhookEndpoints(
  ctx: UseCaseContext,
  input: { merchantId: string; limit?: number | undefined; cursor?: string | undefined },
): Promise<Page<WebhookEndpointRow>> {
  const limit = clampLimit(input.limit);
  const where = {
    merchantId: input.merchantId,
    status: { $ne: "DELETED" },
    ...afterCursor(input.cursor),
  } as FilterQuery<WebhookEndpointRow>;
  const rows = await ctx.em.find(WebhookEndpoint, where, { orderBy: KEYSET_ORDER, limit: limit + 1 });
  return toPage(rows, limit);
}

import type { FilterQuery } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { isUuid } from "../../platform/ids.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../../platform/pagination.ts";
import { VISIBLE_REFUND_STATUSES } from "./contract.ts";
import { SubscriptionRefund, type RefundRow } from "./refund-entities.ts";

interface ListRefundsInput {
  merchantId: string;
  chargeId?: string | undefined;
  subscriptionId?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/**
 * The merchant's refunds, newest first, keyset-paginated, optionally of one
 * charge or one subscription. A filter naming another merchant's (or no)
 * charge simply matches nothing.
 */
export async function listRefunds(ctx: UseCaseContext, input: ListRefundsInput): Promise<Page<RefundRow>> {
  const limit = clampLimit(input.limit);
  for (const id of [input.chargeId, input.subscriptionId]) {
    if (id !== undefined && !isUuid(id)) return { items: [], hasMore: false, nextCursor: undefined };
  }
  const where = {
    merchantId: input.merchantId,
    status: { $in: [...VISIBLE_REFUND_STATUSES] },
    ...(input.chargeId !== undefined && { chargeId: input.chargeId.toLowerCase() }),
    ...(input.subscriptionId !== undefined && { subscriptionId: input.subscriptionId.toLowerCase() }),
    ...afterCursor(input.cursor),
  } as FilterQuery<RefundRow>;
  const rows = await ctx.em.find(SubscriptionRefund, where, { orderBy: KEYSET_ORDER, limit: limit + 1 });
  return toPage(rows, limit);
}

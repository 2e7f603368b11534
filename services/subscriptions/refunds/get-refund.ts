import type { UseCaseContext } from "../../platform/use-case.ts";
import { notFound } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { REFUND_ERRORS, VISIBLE_REFUND_STATUSES } from "./contract.ts";
import { SubscriptionRefund, type RefundRow } from "./refund-entities.ts";

/** One of the merchant's refunds; another merchant's, or a FAILED attempt (nothing was refunded), is not found. */
export async function getRefund(ctx: UseCaseContext, merchantId: string, id: string): Promise<RefundRow> {
  const row = isUuid(id) ? await ctx.em.findOne(SubscriptionRefund, { id, merchantId, status: { $in: [...VISIBLE_REFUND_STATUSES] } }) : null;
  if (!row) throw notFound(REFUND_ERRORS.refundNotFound, `refund ${id} not found`);
  return row;
}

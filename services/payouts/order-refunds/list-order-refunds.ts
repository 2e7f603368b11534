import type { UseCaseContext } from "../../platform/use-case.ts";
import { isUuid } from "../../platform/ids.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../../platform/pagination.ts";
import { VISIBLE_ORDER_REFUND_STATUSES } from "../contract.ts";
import { OrderRefund, type OrderRefundRow } from "../entities.ts";
import type { PayoutPorts } from "../payout-ports.ts";
import { orderNotFound } from "./create-order-refund.ts";

/** The refunds of one of the merchant's orders, newest first (keyset); another merchant's order is 404. */
export async function listOrderRefunds(
  ctx: UseCaseContext,
  ports: Pick<PayoutPorts, "orders">,
  input: { merchantId: string; paymentOrderId: string; limit?: number | undefined; cursor?: string | undefined },
): Promise<Page<OrderRefundRow>> {
  if (!isUuid(input.paymentOrderId)) throw orderNotFound(input.paymentOrderId);
  const order = await ports.orders.refundable(input.merchantId, input.paymentOrderId.toLowerCase());
  if (!order) throw orderNotFound(input.paymentOrderId);
  const limit = clampLimit(input.limit);
  const rows = await ctx.em.find(
    OrderRefund,
    { merchantId: input.merchantId, paymentOrderId: order.id, status: { $in: [...VISIBLE_ORDER_REFUND_STATUSES] }, ...afterCursor(input.cursor) },
    { orderBy: KEYSET_ORDER, limit: limit + 1 },
  );
  return toPage(rows, limit);
}

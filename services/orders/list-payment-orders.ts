import type { FilterQuery } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../platform/pagination.ts";
import { PaymentOrder, type PaymentOrderRow } from "./entities.ts";
import { isOrderStatus, ORDER_STATUSES } from "./order-status.ts";
import { paymentsOf, type OrderWithPayments } from "./order-store.ts";

interface ListPaymentOrdersInput {
  merchantId: string;
  limit?: number | undefined;
  cursor?: string | undefined;
  status?: string | undefined;
  externalCustomerId?: string | undefined;
}

/** Newest first, keyset-paginated; each order with its payments (one extra query per page). */
export async function listPaymentOrders(ctx: UseCaseContext, input: ListPaymentOrdersInput): Promise<Page<OrderWithPayments>> {
  if (input.status !== undefined && !isOrderStatus(input.status)) {
    throw invalid("INVALID_REQUEST", `status: must be one of ${ORDER_STATUSES.join(", ")}`);
  }
  const limit = clampLimit(input.limit);
  const where = {
    merchantId: input.merchantId,
    ...(input.status !== undefined && { status: input.status }),
    ...(input.externalCustomerId !== undefined && { externalCustomerId: input.externalCustomerId }),
    ...afterCursor(input.cursor),
  } as FilterQuery<PaymentOrderRow>;
  const page = toPage(await ctx.em.find(PaymentOrder, where, { orderBy: KEYSET_ORDER, limit: limit + 1 }), limit);
  const payments = await paymentsOf(
    ctx.em,
    page.items.map((o) => o.id),
  );
  return {
    ...page,
    items: page.items.map((order) => ({ order, payments: payments.filter((p) => p.orderId === order.id) })),
  };
}

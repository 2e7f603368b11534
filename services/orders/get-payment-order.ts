import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { PaymentOrder, type PaymentOrderRow } from "./entities.ts";
import { isReference } from "./order-input.ts";
import { findOrderWithPayments, type OrderWithPayments } from "./order-store.ts";

const missing = (what: string) => notFound("PAYMENT_ORDER_NOT_FOUND", `payment order ${what} not found`);

/** Another merchant's order is indistinguishable from a missing one. */
export async function getPaymentOrder(ctx: UseCaseContext, merchantId: string, id: string): Promise<OrderWithPayments> {
  const found = isUuid(id) ? await findOrderWithPayments(ctx.em, { id, merchantId }) : null;
  if (!found) throw missing(id);
  return found;
}

/**
 * A value no create accepts (control characters, over 200 characters) names
 * no order: 404 without a query (Postgres refuses a NUL in text outright).
 */
export async function getPaymentOrderByExternalId(ctx: UseCaseContext, merchantId: string, externalId: string): Promise<OrderWithPayments> {
  const found = isReference(externalId) ? await findOrderWithPayments(ctx.em, { merchantId, externalId }) : null;
  if (!found) throw missing(isReference(externalId) ? `with externalId ${externalId}` : "with this externalId");
  return found;
}

/** The poll path: one indexed row read, no payments. */
export async function getPaymentOrderStatus(ctx: UseCaseContext, merchantId: string, id: string): Promise<PaymentOrderRow> {
  const order = isUuid(id) ? await ctx.em.findOne(PaymentOrder, { id, merchantId }) : null;
  if (!order) throw missing(id);
  return order;
}

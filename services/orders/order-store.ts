import { LockMode, type FilterQuery } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { OrderPayment, PaymentOrder, type OrderPaymentRow, type PaymentOrderRow } from "./entities.ts";

export interface OrderWithPayments {
  order: PaymentOrderRow;
  payments: OrderPaymentRow[];
}

/** Payments in the order they were seen (id breaks ties), as every record lists them. */
export function paymentsOf(em: EntityManager, orderIds: string[]): Promise<OrderPaymentRow[]> {
  if (orderIds.length === 0) return Promise.resolve([]);
  return em.find(OrderPayment, { orderId: { $in: orderIds } }, { orderBy: { seenAt: "asc", id: "asc" } });
}

export async function findOrderWithPayments(em: EntityManager, where: FilterQuery<PaymentOrderRow>): Promise<OrderWithPayments | null> {
  const order = await em.findOne(PaymentOrder, where);
  if (!order) return null;
  return { order, payments: await paymentsOf(em, [order.id]) };
}

/**
 * Loads and row-locks an order (select … for update) with its payments. Every
 * change of an order goes through this inside its transaction, so deposits,
 * confirmations and expiry of one order are applied one at a time.
 */
export async function lockOrder(em: EntityManager, where: FilterQuery<PaymentOrderRow>): Promise<OrderWithPayments | null> {
  const order = await em.findOne(PaymentOrder, where, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!order) return null;
  return { order, payments: await paymentsOf(em, [order.id]) };
}

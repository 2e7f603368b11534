import { LockMode, type FilterQuery } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { oldestOf } from "../platform/observability/due-work.ts";
import { BUMP_VERSION } from "../platform/record-version.ts";
import { OrderPayment, PaymentOrder, type OrderPaymentRow, type PaymentOrderRow } from "./entities.ts";
import { sqlStatus } from "../platform/status-machine.ts";
import { CREDIT_STATUSES } from "./contract.ts";
import { OPEN_STATUSES } from "./order-status.ts";

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

/** Marks the order settled at `now` (once: an order already settled is left alone). */
export async function markOrderSettled(em: EntityManager, orderId: string, now: Date): Promise<void> {
  await em.execute(`update payment_orders set settled_at = ?, updated_at = ?, ${BUMP_VERSION} where id = ? and settled_at is null`, [now, now, orderId]);
}

/** When the oldest open order past its expiry at `now` expired (the expiry sweep's lag). */
export function oldestExpiredOpenOrderAt(em: EntityManager, now: Date): Promise<Date | null> {
  return oldestOf(em, "select min(expires_at) as oldest from payment_orders where status = any(?::text[]) and expires_at <= ?", [
    `{${OPEN_STATUSES.join(",")}}`,
    now,
  ]);
}

/** A credit row as the settle locks it: its fence and what its record needs. */
interface CreditLockRow {
  status: string;
  lease_generation: number;
  order_id: string;
  idempotency_key: string;
}

/** The credit row locked until the transaction ends (undefined when there is none). */
export async function lockCredit(em: EntityManager, creditId: string): Promise<CreditLockRow | undefined> {
  const [row] = await em.execute<CreditLockRow[]>(
    "select status, lease_generation, order_id, idempotency_key from payment_order_credits where id = ? for update",
    [creditId],
  );
  return row;
}

/** The credit's status (undefined when there is no such credit). */
export async function creditStatus(em: EntityManager, creditId: string): Promise<string | undefined> {
  const [row] = await em.execute<{ status: string }[]>("select status from payment_order_credits where id = ?", [creditId]);
  return row?.status;
}

const CREDIT_DONE = sqlStatus(CREDIT_STATUSES, "DONE");

/** The credit is done: the wallet moved the money in `transactionId`; its lease and schedule are cleared. */
export async function markCreditDone(em: EntityManager, creditId: string, transactionId: string, now: Date): Promise<void> {
  await em.execute(
    `update payment_order_credits set status = ${CREDIT_DONE}, wallet_transaction_id = ?, credited_at = ?, lease_until = null, next_settle_at = null where id = ?`,
    [transactionId, now, creditId],
  );
}

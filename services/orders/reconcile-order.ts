import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../platform/clock.ts";
import { add, amount, compare, formatAtScale, isNegative, percentOf, sub, zero, type Amount } from "../platform/money.ts";
import { recordEvent } from "../events/record-event.ts";
import type { EventType } from "../events/contract.ts";
import { OrderCredit, type OrderPaymentRow } from "./entities.ts";
import { OPEN_STATUSES, transition, type OrderTransitionEvent } from "./order-status.ts";
import { orderRecord } from "./order-record.ts";
import type { OrderWithPayments } from "./order-store.ts";
import { touch } from "../platform/record-version.ts";
import { ledgerKeys } from "../wallet/contract.ts";

const orderCreditKey = ledgerKeys.orderCredit;
const paymentCreditKey = ledgerKeys.orderPaymentCredit;

const sum = (rows: readonly OrderPaymentRow[]): Amount => rows.reduce((acc, p) => add(acc, amount(p.amount)), zero());

interface ReconcileResult {
  /** Credits written in this transaction: enqueue them after commit. */
  creditIds: string[];
}

/**
 * Brings a locked order in line with its payments, inside the transaction
 * that changed them: totals, the status (through the status table), the
 * events, and the credits the merchant is owed. `newPayment` is the transfer
 * just recorded, if any.
 *
 * - Only transfers made before expiry count toward the amount (amountPaid);
 *   later ones are late (amountPaidLate), flagged and never lost.
 * - Paid means the counted total reaches amountToPay less the underpayment
 *   tolerance; PAID needs that much with the asset's required confirmations,
 *   CONFIRMING is paid in full but not yet confirmed.
 * - Money received is always credited to the merchant once confirmed: the
 *   confirmed transfers as one credit when the order becomes PAID (key: the
 *   order id), any other confirmed transfer of a PAID or EXPIRED order on its own.
 */
export function reconcileOrder(em: EntityManager, clock: Clock, state: OrderWithPayments, newPayment?: OrderPaymentRow): ReconcileResult {
  const { order, payments } = state;
  const now = clock.now();
  const confirmedEnough = (p: OrderPaymentRow) => p.confirmations >= order.requiredConfirmations;
  const counted = payments.filter((p) => !p.late);
  const total = sum(counted);
  const confirmed = sum(counted.filter(confirmedEnough));
  const due = amount(order.amountToPay);
  const threshold = sub(due, percentOf(due, order.underpaymentTolerancePercent, order.decimals));
  const overpaid = sub(total, due);
  const previousOverpaid = amount(order.overpaidAmount);

  order.amountPaid = formatAtScale(total, order.decimals);
  order.amountPaidLate = formatAtScale(sum(payments.filter((p) => p.late)), order.decimals);
  order.overpaidAmount = formatAtScale(isNegative(overpaid) ? zero() : overpaid, order.decimals);
  order.latePayment = payments.some((p) => p.late);
  touch(order, now);

  const move = nextMove(order.status, { total, confirmed, threshold, newCounted: newPayment !== undefined && !newPayment.late });
  const events: EventType[] = [];
  let becamePaid = false;
  if (move) {
    const t = transition(order.status, move);
    order.status = t.to;
    events.push(t.emits);
    if (t.to === "PAID") {
      order.paidAt = now;
      becamePaid = true;
    }
  }
  const overpaidNow = amount(order.overpaidAmount);
  if (order.status === "PAID" && compare(overpaidNow, zero()) > 0 && (becamePaid || compare(overpaidNow, previousOverpaid) > 0)) {
    events.push("payment_order.overpaid");
  }
  if (newPayment?.late) events.push("payment_order.late_payment");

  const creditIds: string[] = [];
  const creditable = payments.filter((p) => p.creditId == null && confirmedEnough(p));
  if (becamePaid && creditable.length > 0) {
    creditIds.push(addCredit(em, now, state, orderCreditKey(order.id), creditable));
  } else if (order.status === "PAID" || order.status === "EXPIRED") {
    for (const p of creditable) creditIds.push(addCredit(em, now, state, paymentCreditKey(order.id, p.id), [p]));
  }

  const data = orderRecord(order, payments);
  for (const type of events) recordEvent(em, clock, { merchantId: order.merchantId, type, data });
  return { creditIds };
}

function nextMove(
  status: OrderWithPayments["order"]["status"],
  t: { total: Amount; confirmed: Amount; threshold: Amount; newCounted: boolean },
): OrderTransitionEvent | undefined {
  const open = OPEN_STATUSES.includes(status);
  if (!open && status !== "CONFIRMING") return undefined;
  if (compare(t.confirmed, t.threshold) >= 0) return "paid_confirmed";
  if (compare(t.total, t.threshold) >= 0) return open ? "paid_unconfirmed" : undefined;
  if (open && t.newCounted) return "partial_payment";
  return undefined;
}

/**
 * Expires an open order past its expiry (the caller checked both), in the
 * caller's transaction. Confirmed partial payments are credited: the money
 * arrived and belongs on the merchant's account, who may refund it.
 */
export function expireInPlace(em: EntityManager, clock: Clock, state: OrderWithPayments): ReconcileResult {
  const { order } = state;
  const t = transition(order.status, "expire");
  const now = clock.now();
  order.status = t.to;
  order.expiredAt = now;
  touch(order, now);
  const creditIds: string[] = [];
  for (const p of state.payments) {
    if (p.creditId == null && p.confirmations >= order.requiredConfirmations) {
      creditIds.push(addCredit(em, now, state, paymentCreditKey(order.id, p.id), [p]));
    }
  }
  recordEvent(em, clock, { merchantId: order.merchantId, type: t.emits, data: orderRecord(order, state.payments) });
  return { creditIds };
}

function addCredit(em: EntityManager, now: Date, state: OrderWithPayments, idempotencyKey: string, covered: OrderPaymentRow[]): string {
  const credit = em.create(OrderCredit, {
    id: randomUUID(),
    orderId: state.order.id,
    merchantId: state.order.merchantId,
    idempotencyKey,
    asset: state.order.asset,
    amount: formatAtScale(sum(covered), state.order.decimals),
    status: "PENDING",
    walletTransactionId: null,
    createdAt: now,
    creditedAt: null,
  });
  for (const p of covered) p.creditId = credit.id;
  return credit.id;
}

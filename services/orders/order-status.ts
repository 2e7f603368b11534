import { DomainError } from "../platform/errors.ts";
import type { EventType } from "../events/contract.ts";
import { ORDER_STATUSES, type OrderStatus } from "./contract.ts";

/**
 * The payment-order status machine: the one table of `from → event → to`.
 *
 * | from                 | event            | to         | emits                      |
 * |----------------------|------------------|------------|----------------------------|
 * | PENDING, UNDERPAID   | partial_payment  | UNDERPAID  | payment_order.underpaid    |
 * | PENDING, UNDERPAID   | paid_unconfirmed | CONFIRMING | payment_order.confirming   |
 * | PENDING, UNDERPAID,  | paid_confirmed   | PAID       | payment_order.paid         |
 * |   CONFIRMING         |                  |            |                            |
 * | PENDING, UNDERPAID   | expire           | EXPIRED    | payment_order.expired      |
 *
 * PAID and EXPIRED are final. A CONFIRMING order never expires: it was paid
 * in full in time and only waits for the chain. Overpayment is a flag
 * (overpaid_amount > 0, event payment_order.overpaid), not a status, so
 * "status == PAID" stays the one test a merchant needs; a transfer after
 * expiry is recorded as late on any status (event payment_order.late_payment).
 */
export { ORDER_STATUSES, type OrderStatus };

export type OrderTransitionEvent = "partial_payment" | "paid_unconfirmed" | "paid_confirmed" | "expire";

interface Transition {
  to: OrderStatus;
  emits: EventType;
}

const partial: Transition = { to: "UNDERPAID", emits: "payment_order.underpaid" };
const confirming: Transition = { to: "CONFIRMING", emits: "payment_order.confirming" };
const paid: Transition = { to: "PAID", emits: "payment_order.paid" };
const expired: Transition = { to: "EXPIRED", emits: "payment_order.expired" };

const TRANSITIONS: Record<OrderStatus, Partial<Record<OrderTransitionEvent, Transition>>> = {
  PENDING: { partial_payment: partial, paid_unconfirmed: confirming, paid_confirmed: paid, expire: expired },
  UNDERPAID: { partial_payment: partial, paid_unconfirmed: confirming, paid_confirmed: paid, expire: expired },
  CONFIRMING: { paid_confirmed: paid },
  PAID: {},
  EXPIRED: {},
};

/** Statuses whose orders still accept payment toward the amount and can expire. */
export const OPEN_STATUSES: readonly OrderStatus[] = ["PENDING", "UNDERPAID"];

export const isOrderStatus = (value: string): value is OrderStatus => (ORDER_STATUSES as readonly string[]).includes(value);

export function canTransition(from: OrderStatus, event: OrderTransitionEvent): boolean {
  return TRANSITIONS[from][event] !== undefined;
}

/** The next status and the event it emits; an illegal move is a 409. */
export function transition(from: OrderStatus, event: OrderTransitionEvent): Transition {
  const t = TRANSITIONS[from][event];
  if (!t) {
    throw new DomainError("failed_precondition", "INVALID_STATUS_TRANSITION", `a ${from} payment order cannot take ${event.replace(/_/g, " ")}`);
  }
  return t;
}

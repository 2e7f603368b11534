import { defineStatusMachine } from "../platform/status-machine.ts";
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

export const orderMachine = defineStatusMachine<OrderStatus, OrderTransitionEvent>(
  "payment order",
  ORDER_STATUSES,
  [
    { from: "PENDING", event: "partial_payment", to: "UNDERPAID" },
    { from: "PENDING", event: "paid_unconfirmed", to: "CONFIRMING" },
    { from: "PENDING", event: "paid_confirmed", to: "PAID" },
    { from: "PENDING", event: "expire", to: "EXPIRED" },
    { from: "UNDERPAID", event: "partial_payment", to: "UNDERPAID" },
    { from: "UNDERPAID", event: "paid_unconfirmed", to: "CONFIRMING" },
    { from: "UNDERPAID", event: "paid_confirmed", to: "PAID" },
    { from: "UNDERPAID", event: "expire", to: "EXPIRED" },
    { from: "CONFIRMING", event: "paid_confirmed", to: "PAID" },
  ],
  (from, event) => `a ${from} payment order cannot take ${event.replace(/_/g, " ")}`,
);

/** The event each status entered is announced with (the status names the event). */
const EMITS: Record<Exclude<OrderStatus, "PENDING">, EventType> = {
  UNDERPAID: "payment_order.underpaid",
  CONFIRMING: "payment_order.confirming",
  PAID: "payment_order.paid",
  EXPIRED: "payment_order.expired",
};

/** Statuses whose orders still accept payment toward the amount and can expire. */
export const OPEN_STATUSES: readonly OrderStatus[] = orderMachine.statesFrom("expire");

export const isOrderStatus = (value: string): value is OrderStatus => (ORDER_STATUSES as readonly string[]).includes(value);

/** The next status and the event it emits; an illegal move is a 409. */
export function transition(from: OrderStatus, event: OrderTransitionEvent): { to: OrderStatus; emits: EventType } {
  const to = orderMachine.next(from, event) as Exclude<OrderStatus, "PENDING">;
  return { to, emits: EMITS[to] };
}

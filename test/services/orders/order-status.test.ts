import { expect } from "chai";
import { DomainError } from "../../../services/platform/errors.ts";
import { ORDER_STATUSES, orderMachine, transition } from "../../../services/orders/order-status.ts";

describe("payment order status table", () => {
  it("allows exactly the documented moves and names the event each emits", () => {
    const allowed = ORDER_STATUSES.flatMap((from) =>
      (["partial_payment", "paid_unconfirmed", "paid_confirmed", "expire"] as const)
        .filter((e) => orderMachine.can(from, e))
        .map((e) => `${from} -${e}-> ${transition(from, e).to} (${transition(from, e).emits})`),
    );
    expect(allowed).to.deep.equal([
      "PENDING -partial_payment-> UNDERPAID (payment_order.underpaid)",
      "PENDING -paid_unconfirmed-> CONFIRMING (payment_order.confirming)",
      "PENDING -paid_confirmed-> PAID (payment_order.paid)",
      "PENDING -expire-> EXPIRED (payment_order.expired)",
      "UNDERPAID -partial_payment-> UNDERPAID (payment_order.underpaid)",
      "UNDERPAID -paid_unconfirmed-> CONFIRMING (payment_order.confirming)",
      "UNDERPAID -paid_confirmed-> PAID (payment_order.paid)",
      "UNDERPAID -expire-> EXPIRED (payment_order.expired)",
      "CONFIRMING -paid_confirmed-> PAID (payment_order.paid)",
    ]);
  });

  it("refuses an illegal move with one typed error (409 at the edge)", () => {
    for (const [from, event] of [
      ["PAID", "expire"],
      ["EXPIRED", "paid_confirmed"],
      ["CONFIRMING", "expire"],
      ["CONFIRMING", "partial_payment"],
    ] as const) {
      try {
        transition(from, event);
        expect.fail(`${from} -${event}-> should be refused`);
      } catch (err) {
        expect(err).to.be.instanceOf(DomainError);
        expect(err).to.include({ kind: "failed_precondition", code: "INVALID_STATUS_TRANSITION" });
      }
    }
  });
});

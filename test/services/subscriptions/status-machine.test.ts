import { expect } from "chai";
import { InvalidStatusTransitionError } from "../../../services/platform/status-machine.ts";
import {
  nextStatus,
  SUBSCRIPTION_STATUSES,
  subscriptionMachine,
  TERMINAL_STATUSES,
  type SubscriptionEvent,
} from "../../../services/subscriptions/status-machine.ts";

const EVENTS: SubscriptionEvent[] = [
  "approve",
  "approve_with_trial",
  "expire",
  "decline",
  "pause",
  "resume",
  "cancel",
  "charge_succeeded",
  "charge_failed",
  "retries_exhausted",
  "retries_exhausted_cancel",
];

/** The table from the issue, written out independently of the code's table. */
const EXPECTED: Record<string, string> = {
  "PENDING_APPROVAL approve": "ACTIVE",
  "PENDING_APPROVAL approve_with_trial": "TRIALING",
  "PENDING_APPROVAL expire": "EXPIRED",
  "PENDING_APPROVAL decline": "CANCELLED",
  "PENDING_APPROVAL cancel": "CANCELLED",
  "ACTIVE pause": "PAUSED",
  "TRIALING pause": "PAUSED",
  "ACTIVE cancel": "CANCELLED",
  "TRIALING cancel": "CANCELLED",
  "PAUSED cancel": "CANCELLED",
  // Recurring billing: renewals and dunning.
  "ACTIVE charge_succeeded": "ACTIVE",
  "TRIALING charge_succeeded": "ACTIVE",
  "PAST_DUE charge_succeeded": "ACTIVE",
  "ACTIVE charge_failed": "PAST_DUE",
  "TRIALING charge_failed": "PAST_DUE",
  "PAST_DUE charge_failed": "PAST_DUE",
  "PAST_DUE retries_exhausted": "UNPAID",
  "PAST_DUE retries_exhausted_cancel": "CANCELLED",
  "PAST_DUE cancel": "CANCELLED",
  "UNPAID cancel": "CANCELLED",
};

describe("subscription status machine", () => {
  for (const from of SUBSCRIPTION_STATUSES) {
    for (const event of EVENTS) {
      const key = `${from} ${event}`;
      if (from === "PAUSED" && event === "resume") continue;
      it(`${key} → ${EXPECTED[key] ?? "409 INVALID_STATUS_TRANSITION"}`, () => {
        if (EXPECTED[key]) {
          expect(nextStatus(from, event)).to.equal(EXPECTED[key]);
        } else {
          const err = (() => {
            try {
              nextStatus(from, event);
            } catch (e) {
              return e;
            }
          })();
          expect(err).to.be.instanceOf(InvalidStatusTransitionError);
          expect((err as InvalidStatusTransitionError).code).to.equal("INVALID_STATUS_TRANSITION");
          expect((err as InvalidStatusTransitionError).kind).to.equal("failed_precondition");
          expect((err as Error).message).to.include(`status ${from}`);
          expect((err as InvalidStatusTransitionError).machine).to.equal("subscription");
        }
      });
    }
  }

  it("resume goes back to the status it paused from", () => {
    expect(nextStatus("PAUSED", "resume", "ACTIVE")).to.equal("ACTIVE");
    expect(nextStatus("PAUSED", "resume", "TRIALING")).to.equal("TRIALING");
  });

  it("the terminal statuses are CANCELLED and EXPIRED", () => {
    expect([...TERMINAL_STATUSES]).to.deep.equal(["CANCELLED", "EXPIRED"]);
  });

  it("nothing leaves a terminal status", () => {
    for (const terminal of TERMINAL_STATUSES) {
      expect(subscriptionMachine.moves.filter((t) => t.from === terminal)).to.deep.equal([]);
    }
  });

  it("the code's table has exactly the expected moves", () => {
    expect(subscriptionMachine.moves.length).to.equal(Object.keys(EXPECTED).length + 1);
  });
});

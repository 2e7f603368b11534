import { expect } from "chai";
import {
  CHANGE_SESSION_STATUSES,
  CHANGE_TRANSITIONS,
  InvalidChangeSessionTransitionError,
  nextChangeStatus,
  type ChangeSessionEvent,
} from "../../../services/subscriptions/change-sessions/change-session-status-machine.ts";

const EVENTS: ChangeSessionEvent[] = ["approve_immediate", "approve_next_billing", "decline", "expire", "apply", "supersede", "cancel"];

/** The table from the issue (plus: a session awaiting approval ends with its subscription), written out independently. */
const EXPECTED: Record<string, string> = {
  "PENDING_APPROVAL approve_immediate": "APPLIED",
  "PENDING_APPROVAL approve_next_billing": "SCHEDULED",
  "PENDING_APPROVAL decline": "DECLINED",
  "PENDING_APPROVAL expire": "EXPIRED",
  "PENDING_APPROVAL cancel": "CANCELLED",
  "SCHEDULED apply": "APPLIED",
  "SCHEDULED supersede": "CANCELLED",
  "SCHEDULED cancel": "CANCELLED",
};

describe("change session status machine", () => {
  for (const from of CHANGE_SESSION_STATUSES) {
    for (const event of EVENTS) {
      const key = `${from} ${event}`;
      it(`${key} → ${EXPECTED[key] ?? "409 INVALID_CHANGE_SESSION_TRANSITION"}`, () => {
        if (EXPECTED[key]) return expect(nextChangeStatus(from, event)).to.equal(EXPECTED[key]);
        expect(() => nextChangeStatus(from, event)).to.throw(InvalidChangeSessionTransitionError, `status ${from}`);
      });
    }
  }

  it("the code's table has exactly the expected moves", () => {
    expect(Object.fromEntries(CHANGE_TRANSITIONS.map((t) => [`${t.from} ${t.event}`, t.to]))).to.deep.equal(EXPECTED);
  });
});

import { expect } from "chai";
import { InvalidStatusTransitionError } from "../../../services/platform/status-machine.ts";
import {
  CHANGE_SESSION_STATUSES,
  changeSessionMachine,
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
      it(`${key} → ${EXPECTED[key] ?? "409 INVALID_STATUS_TRANSITION"}`, () => {
        if (EXPECTED[key]) return expect(changeSessionMachine.next(from, event)).to.equal(EXPECTED[key]);
        expect(() => changeSessionMachine.next(from, event)).to.throw(InvalidStatusTransitionError, `status ${from}`);
      });
    }
  }

  it("the code's table has exactly the expected moves", () => {
    expect(Object.fromEntries(changeSessionMachine.moves.map((t) => [`${t.from} ${t.event}`, t.to]))).to.deep.equal(EXPECTED);
  });
});

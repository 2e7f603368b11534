import { expect } from "chai";
import { sqlStatus, statusIn } from "../../services/platform/status-machine.ts";
import { subscriptionMachine } from "../../services/subscriptions/status-machine.ts";

describe("sqlStatus", () => {
  it("names one of the machine's statuses as an SQL literal, quoted as statusIn quotes it", () => {
    expect(sqlStatus(subscriptionMachine.statuses, "PAST_DUE")).to.equal("'PAST_DUE'");
    expect(statusIn("status", ["PAST_DUE"])).to.equal(`status in (${sqlStatus(subscriptionMachine.statuses, "PAST_DUE")})`);
  });

  it("throws for a status the machine does not have", () => {
    const statuses: readonly string[] = subscriptionMachine.statuses;
    expect(() => sqlStatus(statuses, "OVERDUE")).to.throw("sqlStatus: OVERDUE is not one of");
  });
});

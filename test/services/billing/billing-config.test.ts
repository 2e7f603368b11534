import { expect } from "chai";
import { ConfigError, loadConfig } from "../../../services/platform/config.ts";
import { billingPolicy } from "../../../services/subscriptions/renewals/billing-policy.ts";

describe("recurring billing: configuration", () => {
  it("defaults: retries 1, 3 and 5 days after the first failure, then UNPAID; notice 3 days before", () => {
    expect(billingPolicy(loadConfig({}))).to.deep.equal({ retryDays: [1, 3, 5], finalStatus: "UNPAID", noticeDays: 3, retryOnTopUp: true });
  });

  it("reads DUNNING_RETRY_DAYS, DUNNING_FINAL_STATUS and CHARGE_NOTICE_DAYS", () => {
    const c = loadConfig({ DUNNING_RETRY_DAYS: " 2, 4 ,7,14", DUNNING_FINAL_STATUS: "CANCELLED", CHARGE_NOTICE_DAYS: "0" });
    expect(billingPolicy(c)).to.deep.equal({ retryDays: [2, 4, 7, 14], finalStatus: "CANCELLED", noticeDays: 0, retryOnTopUp: true });
  });

  it("an empty DUNNING_RETRY_DAYS means the default", () => {
    expect(loadConfig({ DUNNING_RETRY_DAYS: "" }).dunningRetryDays).to.deep.equal([1, 3, 5]);
  });

  for (const bad of ["0", "3,1", "1,1", "1.5", "x", "1,,3", "400", "1,2,3,4,5,6,7,8,9,10,11"]) {
    it(`refuses DUNNING_RETRY_DAYS="${bad}" naming the variable`, () => {
      expect(() => loadConfig({ DUNNING_RETRY_DAYS: bad })).to.throw(ConfigError, /DUNNING_RETRY_DAYS/);
    });
  }

  it("refuses an unknown DUNNING_FINAL_STATUS and a CHARGE_NOTICE_DAYS out of range", () => {
    expect(() => loadConfig({ DUNNING_FINAL_STATUS: "PAUSED" })).to.throw(ConfigError, /DUNNING_FINAL_STATUS/);
    expect(() => loadConfig({ CHARGE_NOTICE_DAYS: "-1" })).to.throw(ConfigError, /CHARGE_NOTICE_DAYS/);
    expect(() => loadConfig({ CHARGE_NOTICE_DAYS: "366" })).to.throw(ConfigError, /CHARGE_NOTICE_DAYS/);
  });
});

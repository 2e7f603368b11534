import { expect } from "chai";
import { nextRetryDelayMs, RETRY_JITTER } from "../../../services/events/retry-schedule.ts";
import { loadConfig, ConfigError } from "../../../services/platform/config.ts";

describe("webhook retry schedule", () => {
  it("defaults to 5 s, 5 min, 30 min, 2 h, 5 h and six times 10 h (about 2.8 days, 12 attempts)", () => {
    const schedule = loadConfig({}).webhookRetryScheduleMs;
    expect(schedule.map((ms) => ms / 1000)).to.deep.equal([5, 300, 1800, 7200, 18000, 36000, 36000, 36000, 36000, 36000, 36000]);
    const totalHours = schedule.reduce((a, b) => a + b, 0) / 3_600_000;
    expect(totalHours).to.be.within(60, 72);
  });

  it("applies ±10 % jitter and ends after the last entry", () => {
    const schedule = [5000, 300_000];
    expect(nextRetryDelayMs(schedule, 1, () => 0)).to.equal(5000 * (1 - RETRY_JITTER));
    expect(nextRetryDelayMs(schedule, 1, () => 1)).to.equal(5000 * (1 + RETRY_JITTER));
    expect(nextRetryDelayMs(schedule, 2, () => 0.5)).to.equal(300_000);
    expect(nextRetryDelayMs(schedule, 3)).to.equal(undefined);
  });

  it("reads WEBHOOK_RETRY_SCHEDULE as seconds and rejects bad lists", () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: "0.25, 2,60" }).webhookRetryScheduleMs).to.deep.equal([250, 2000, 60_000]);
    for (const bad of ["5,,10", "-1", "0", "abc", "5;10", "604801"]) {
      expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: bad }), bad).to.throw(ConfigError, /WEBHOOK_RETRY_SCHEDULE/);
    }
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: "5" })).to.throw(ConfigError, /WEBHOOK_TIMEOUT_MS/);
    expect(() => loadConfig({ WEBHOOK_CONCURRENCY: "0" })).to.throw(ConfigError, /WEBHOOK_CONCURRENCY/);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "true" }).webhookAllowPrivate).to.equal(true);
  });
});

import { expect } from "chai";
import { periodEnd, trialEnd } from "../../../services/subscriptions/billing-calendar.ts";

const d = (iso: string) => new Date(iso);
const ends = (anchor: string, interval: "DAY" | "WEEK" | "MONTH" | "YEAR", count: number, n: number) =>
  Array.from({ length: n + 1 }, (_, i) => periodEnd(d(anchor), interval, count, i).toISOString());

describe("billing calendar", () => {
  it("keeps a month-end anchor: Jan 31 → Feb 29 (leap) → Mar 31 → Apr 30", () => {
    expect(ends("2024-01-31T10:15:00.000Z", "MONTH", 1, 4)).to.deep.equal([
      "2024-01-31T10:15:00.000Z",
      "2024-02-29T10:15:00.000Z",
      "2024-03-31T10:15:00.000Z",
      "2024-04-30T10:15:00.000Z",
      "2024-05-31T10:15:00.000Z",
    ]);
  });

  it("gives Feb 28 in a common year and never drifts to the 28th afterwards", () => {
    expect(ends("2023-01-31T00:00:00.000Z", "MONTH", 1, 3)).to.deep.equal([
      "2023-01-31T00:00:00.000Z",
      "2023-02-28T00:00:00.000Z",
      "2023-03-31T00:00:00.000Z",
      "2023-04-30T00:00:00.000Z",
    ]);
  });

  it("keeps the 30th and 29th anchors too", () => {
    expect(periodEnd(d("2023-01-30T00:00:00Z"), "MONTH", 1, 1).toISOString()).to.equal("2023-02-28T00:00:00.000Z");
    expect(periodEnd(d("2023-01-30T00:00:00Z"), "MONTH", 1, 2).toISOString()).to.equal("2023-03-30T00:00:00.000Z");
    expect(periodEnd(d("2024-01-29T00:00:00Z"), "MONTH", 1, 1).toISOString()).to.equal("2024-02-29T00:00:00.000Z");
  });

  it("yearly from Feb 29 gives Feb 28 in common years and Feb 29 again in leap years", () => {
    expect(ends("2024-02-29T12:00:00.000Z", "YEAR", 1, 4)).to.deep.equal([
      "2024-02-29T12:00:00.000Z",
      "2025-02-28T12:00:00.000Z",
      "2026-02-28T12:00:00.000Z",
      "2027-02-28T12:00:00.000Z",
      "2028-02-29T12:00:00.000Z",
    ]);
  });

  it("multiplies by intervalCount (quarterly from Nov 30; every 2 years)", () => {
    expect(ends("2023-11-30T00:00:00.000Z", "MONTH", 3, 2)).to.deep.equal(["2023-11-30T00:00:00.000Z", "2024-02-29T00:00:00.000Z", "2024-05-30T00:00:00.000Z"]);
    expect(periodEnd(d("2024-02-29T00:00:00Z"), "YEAR", 2, 1).toISOString()).to.equal("2026-02-28T00:00:00.000Z");
    expect(periodEnd(d("2024-02-29T00:00:00Z"), "YEAR", 2, 2).toISOString()).to.equal("2028-02-29T00:00:00.000Z");
  });

  it("crosses year ends", () => {
    expect(periodEnd(d("2023-12-31T23:59:59.999Z"), "MONTH", 1, 1).toISOString()).to.equal("2024-01-31T23:59:59.999Z");
    expect(periodEnd(d("2023-10-31T00:00:00Z"), "MONTH", 4, 1).toISOString()).to.equal("2024-02-29T00:00:00.000Z");
    expect(periodEnd(d("2023-01-31T00:00:00Z"), "MONTH", 12, 1).toISOString()).to.equal("2024-01-31T00:00:00.000Z");
  });

  it("days and weeks are calendar days in UTC (no DST), across month and leap-day boundaries", () => {
    expect(ends("2024-02-27T08:00:00.000Z", "DAY", 1, 3)).to.deep.equal([
      "2024-02-27T08:00:00.000Z",
      "2024-02-28T08:00:00.000Z",
      "2024-02-29T08:00:00.000Z",
      "2024-03-01T08:00:00.000Z",
    ]);
    expect(periodEnd(d("2024-03-28T00:30:00Z"), "WEEK", 1, 1).toISOString()).to.equal("2024-04-04T00:30:00.000Z");
    expect(periodEnd(d("2024-12-25T00:00:00Z"), "WEEK", 2, 1).toISOString()).to.equal("2025-01-08T00:00:00.000Z");
    expect(periodEnd(d("2024-01-01T00:00:00Z"), "DAY", 365, 1).toISOString()).to.equal("2024-12-31T00:00:00.000Z");
  });

  it("n = 0 is the anchor; twelve monthly periods make one year", () => {
    const anchor = d("2024-01-31T05:00:00Z");
    expect(periodEnd(anchor, "MONTH", 1, 0).toISOString()).to.equal(anchor.toISOString());
    expect(periodEnd(anchor, "MONTH", 1, 12).toISOString()).to.equal("2025-01-31T05:00:00.000Z");
  });

  it("refuses a negative period or a zero count", () => {
    expect(() => periodEnd(d("2024-01-01T00:00:00Z"), "MONTH", 1, -1)).to.throw(RangeError);
    expect(() => periodEnd(d("2024-01-01T00:00:00Z"), "MONTH", 0, 1)).to.throw(RangeError);
    expect(() => periodEnd(d("2024-01-01T00:00:00Z"), "MONTH", 1, 1.5)).to.throw(RangeError);
  });

  it("a trial ends trialDays calendar days after approval", () => {
    expect(trialEnd(d("2024-02-20T09:00:00Z"), 14).toISOString()).to.equal("2024-03-05T09:00:00.000Z");
  });
});

import { expect } from "chai";
import type { SubscriptionRow } from "../../../services/subscriptions/entities.ts";
import { anchorFor, duePeriod, periodStart, skipPeriodsMissedWhilePaused, type Cadence } from "../../../services/subscriptions/renewals/billing-periods.ts";

const d = (iso: string) => new Date(iso);
const MONTHLY: Cadence = { interval: "MONTH", count: 1 };

/** The fields the period rules read and write. */
function sub(fields: { anchor: string; nextPeriodIndex: number; nextBillingAt: string; anchorPeriodIndex?: number }): SubscriptionRow {
  return {
    id: "s",
    billingAnchor: d(fields.anchor),
    anchorPeriodIndex: fields.anchorPeriodIndex ?? 0,
    nextPeriodIndex: fields.nextPeriodIndex,
    nextBillingAt: d(fields.nextBillingAt),
    currentPeriodStart: null,
    currentPeriodEnd: null,
  } as unknown as SubscriptionRow;
}

describe("recurring billing: period rules (UTC calendar, anchored)", () => {
  it("period n of a 31 January monthly anchor: 29 Feb (leap), 31 Mar, 30 Apr; never drifts", () => {
    const s = sub({ anchor: "2028-01-31T09:00:00.000Z", nextPeriodIndex: 1, nextBillingAt: "2028-02-29T09:00:00.000Z" });
    anchorFor(s, MONTHLY);
    expect(s.billingAnchor!.toISOString()).to.equal("2028-01-31T09:00:00.000Z");
    expect([1, 2, 3, 12, 13].map((n) => periodStart(s, MONTHLY, n).toISOString())).to.deep.equal([
      "2028-02-29T09:00:00.000Z",
      "2028-03-31T09:00:00.000Z",
      "2028-04-30T09:00:00.000Z",
      "2029-01-31T09:00:00.000Z",
      "2029-02-28T09:00:00.000Z",
    ]);
    expect(duePeriod(s, MONTHLY)).to.deep.equal({ index: 1, start: d("2028-02-29T09:00:00.000Z"), end: d("2028-03-31T09:00:00.000Z") });
  });

  it("yearly from 29 February: 28 February in common years, 29 February in leap years", () => {
    const yearly: Cadence = { interval: "YEAR", count: 1 };
    const s = sub({ anchor: "2028-02-29T00:00:00.000Z", nextPeriodIndex: 1, nextBillingAt: "2029-02-28T00:00:00.000Z" });
    expect([1, 2, 3, 4].map((n) => periodStart(s, yearly, n).toISOString().slice(0, 10))).to.deep.equal([
      "2029-02-28",
      "2030-02-28",
      "2031-02-28",
      "2032-02-29",
    ]);
  });

  it("a plan change to another cadence re-anchors at the next billing date and keeps counting periods", () => {
    const s = sub({ anchor: "2027-01-31T00:00:00.000Z", nextPeriodIndex: 3, nextBillingAt: "2027-04-30T00:00:00.000Z" });
    const weekly: Cadence = { interval: "WEEK", count: 2 };
    anchorFor(s, weekly);
    expect(s.billingAnchor!.toISOString()).to.equal("2027-04-30T00:00:00.000Z");
    expect(s.anchorPeriodIndex).to.equal(3);
    expect(duePeriod(s, weekly)).to.deep.equal({ index: 3, start: d("2027-04-30T00:00:00.000Z"), end: d("2027-05-14T00:00:00.000Z") });
  });

  it("an anchor moved without its period index (by a plan change) is healed to the next billing date", () => {
    const s = sub({ anchor: "2027-04-30T00:00:00.000Z", nextPeriodIndex: 3, nextBillingAt: "2027-04-30T00:00:00.000Z", anchorPeriodIndex: 0 });
    anchorFor(s, MONTHLY);
    expect(s.anchorPeriodIndex).to.equal(3);
    expect(duePeriod(s, MONTHLY).end.toISOString()).to.equal("2027-05-30T00:00:00.000Z");
  });

  describe("resume: the anchor is kept, billing dates passed while paused are skipped without charge", () => {
    it("resumed mid-April after missing 29 Feb and 31 Mar: the current period is 31 Mar–30 Apr, next billing 30 Apr", () => {
      const s = sub({ anchor: "2028-01-31T09:00:00.000Z", nextPeriodIndex: 1, nextBillingAt: "2028-02-29T09:00:00.000Z" });
      expect(skipPeriodsMissedWhilePaused(s, MONTHLY, d("2028-04-15T00:00:00.000Z"))).to.equal(2);
      expect(s.nextPeriodIndex).to.equal(3);
      expect(s.currentPeriodStart!.toISOString()).to.equal("2028-03-31T09:00:00.000Z");
      expect(s.currentPeriodEnd!.toISOString()).to.equal("2028-04-30T09:00:00.000Z");
      expect(s.nextBillingAt!.toISOString()).to.equal("2028-04-30T09:00:00.000Z");
    });

    it("resumed exactly on a billing date: that date stays (charged now, not skipped)", () => {
      const s = sub({ anchor: "2028-01-31T09:00:00.000Z", nextPeriodIndex: 1, nextBillingAt: "2028-02-29T09:00:00.000Z" });
      expect(skipPeriodsMissedWhilePaused(s, MONTHLY, d("2028-03-31T09:00:00.000Z"))).to.equal(1);
      expect(s.nextBillingAt!.toISOString()).to.equal("2028-03-31T09:00:00.000Z");
      expect(s.nextPeriodIndex).to.equal(2);
    });

    it("resumed before the next billing date: nothing changes", () => {
      const s = sub({ anchor: "2028-01-31T09:00:00.000Z", nextPeriodIndex: 1, nextBillingAt: "2028-02-29T09:00:00.000Z" });
      expect(skipPeriodsMissedWhilePaused(s, MONTHLY, d("2028-02-20T00:00:00.000Z"))).to.equal(0);
      expect(s.nextPeriodIndex).to.equal(1);
      expect(s.nextBillingAt!.toISOString()).to.equal("2028-02-29T09:00:00.000Z");
      expect(s.currentPeriodStart).to.equal(null);
    });
  });
});

import { expect } from "chai";
import { periodEnd } from "../../../services/subscriptions/billing-calendar.ts";
import { prorationAmount, prorationFor } from "../../../services/subscriptions/pricing/proration.ts";
import { periodPrice } from "../../../services/subscriptions/pricing/period-price.ts";

const at = (iso: string) => new Date(iso);
const SECOND = 1000;

/** The proration rule (pricing/proration.ts) on the engine's calendar periods (billing-calendar.ts); the price module. */
describe("pricing: proration on calendar periods", () => {
  it("the 31st and February in a leap year: anchored 31 January 2028, period 0 ends 29 February (29 days)", () => {
    const anchor = at("2028-01-31T09:00:00Z");
    const start = periodEnd(anchor, "MONTH", 1, 0);
    const end = periodEnd(anchor, "MONTH", 1, 1);
    expect(end.toISOString()).to.equal("2028-02-29T09:00:00.000Z");
    // 14 of 29 days unused: (58 − 29) × 14 / 29 = 14.
    expect(prorationAmount("29", "58", start, end, at("2028-02-15T09:00:00Z"))).to.equal("14");
    // Period 1 runs 29 February → 31 March (31 days): a change on 16 March, 15 days left.
    const p1start = periodEnd(anchor, "MONTH", 1, 1);
    const p1end = periodEnd(anchor, "MONTH", 1, 2);
    expect(p1end.toISOString()).to.equal("2028-03-31T09:00:00.000Z");
    expect(prorationAmount("31", "62", p1start, p1end, at("2028-03-16T09:00:00Z"))).to.equal("15");
  });

  it("February in a common year (28 days) and a yearly plan anchored on 29 February", () => {
    const anchor = at("2027-01-31T00:00:00Z");
    const start = periodEnd(anchor, "MONTH", 1, 0);
    const end = periodEnd(anchor, "MONTH", 1, 1);
    expect(end.toISOString()).to.equal("2027-02-28T00:00:00.000Z");
    expect(prorationAmount("10", "38", start, end, at("2027-02-14T00:00:00Z"))).to.equal("14"); // 28 × 14/28
    const yearly = at("2028-02-29T00:00:00Z");
    const yEnd = periodEnd(yearly, "YEAR", 1, 1);
    expect(yEnd.toISOString()).to.equal("2029-02-28T00:00:00.000Z"); // 365 days
    expect(prorationAmount("0", "365", yearly, yEnd, at("2028-03-01T00:00:00Z"))).to.equal("364"); // 1 day used
    // Later periods keep the anchor's day, clamped in common years, 29 February again in the next leap year.
    expect(periodEnd(yearly, "YEAR", 1, 2).toISOString()).to.equal("2030-02-28T00:00:00.000Z");
    expect(periodEnd(yearly, "YEAR", 1, 4).toISOString()).to.equal("2032-02-29T00:00:00.000Z");
  });

  it("a change in the first second of a period prorates all of it; in the last second, one second; at or past the end, nothing", () => {
    const start = at("2027-04-30T12:00:00Z");
    const end = periodEnd(start, "MONTH", 1, 1); // 30 May (the anchor day is the 30th): 30 days
    const total = (end.getTime() - start.getTime()) / SECOND;
    expect(prorationAmount("10", "20", start, end, start)).to.equal("10");
    const oneUsed = trunc18(total - 1, total);
    expect(prorationAmount("10", "20", start, end, new Date(start.getTime() + SECOND))).to.equal(oneUsed);
    expect(prorationAmount("10", "20", start, end, new Date(start.getTime() + 999))).to.equal(oneUsed); // a second begun counts as used
    expect(prorationAmount("0", "2592000", start, end, new Date(end.getTime() - SECOND))).to.equal("1"); // 2592000 per 30 days = 1 per second
    expect(prorationAmount("0", "2592000", start, end, new Date(end.getTime() - 500))).to.equal("0"); // a second begun counts as used
    expect(prorationAmount("10", "20", start, end, end)).to.equal("0");
    expect(prorationAmount("10", "20", start, end, new Date(end.getTime() + 86_400_000))).to.equal("0");
  });

  it("rounds once, toward −∞ at 18 decimals: a charge never up, a credit never down", () => {
    const start = at("2027-01-01T00:00:00Z");
    const end = at("2027-01-01T00:00:03Z");
    expect(prorationAmount("0", "10", start, end, at("2027-01-01T00:00:02Z"))).to.equal("3.333333333333333333");
    expect(prorationAmount("10", "0", start, end, at("2027-01-01T00:00:02Z"))).to.equal("-3.333333333333333334");
  });

  it("two changes in one period each prorate the rest of the period from their own instant", () => {
    const start = at("2027-06-01T00:00:00Z");
    const end = periodEnd(start, "MONTH", 1, 1); // 30 days
    const up = prorationAmount("30", "60", start, end, at("2027-06-11T00:00:00Z")); // 20 of 30 days
    const down = prorationAmount("60", "30", start, end, at("2027-06-21T00:00:00Z")); // 10 of 30 days
    expect([up, down]).to.deep.equal(["20", "-10"]);
  });

  it("a trial is unpaid: nothing to prorate", () => {
    const sub = { status: "TRIALING", currentPeriodStart: at("2027-01-01T00:00:00Z"), currentPeriodEnd: at("2027-01-15T00:00:00Z") };
    expect(prorationFor(sub, "10", "20", at("2027-01-05T00:00:00Z"))).to.equal("0");
  });

  it("the price of a period: discount rounded up, credit spent before money moves, never below 0", () => {
    const none = {
      discountCouponId: null,
      discountPercentOff: null,
      discountAmountOff: null,
      discountCurrency: null,
      creditBalance: "0",
      creditCurrency: null,
    };
    const c = "00000000-0000-4000-8000-000000000001";
    expect(periodPrice("19.9", "USD", { ...none, discountCouponId: c, discountPercentOff: "30" })).to.deep.equal({
      subtotal: "19.9",
      discountAmount: "5.97",
      creditApplied: "0",
      amount: "13.93",
      couponId: c,
    });
    expect(periodPrice("0.01", "USD", { ...none, discountCouponId: c, discountPercentOff: "33.333" }).discountAmount).to.equal("0.0033333");
    expect(periodPrice("1", "USD", { ...none, discountCouponId: c, discountPercentOff: "0.000000000000000001" }).discountAmount).to.equal(
      "0.000000000000000001",
    );
    expect(periodPrice("4", "USD", { ...none, discountCouponId: c, discountAmountOff: "10", discountCurrency: "USD" }).amount).to.equal("0");
    expect(periodPrice("4", "EUR", { ...none, discountCouponId: c, discountAmountOff: "1", discountCurrency: "USD" }).amount).to.equal("4");
    expect(periodPrice("30", "USD", { ...none, creditBalance: "12.5", creditCurrency: "USD" })).to.include({ creditApplied: "12.5", amount: "17.5" });
    expect(periodPrice("30", "USD", { ...none, discountCouponId: c, discountPercentOff: "50", creditBalance: "40", creditCurrency: "USD" })).to.include({
      discountAmount: "15",
      creditApplied: "15",
      amount: "0",
    });
    expect(periodPrice("30", "EUR", { ...none, creditBalance: "40", creditCurrency: "USD" })).to.include({ creditApplied: "0", amount: "30" });
  });
});

/** 10 × n / d truncated to 18 decimals, as text (n/d < 1 here). */
function trunc18(n: number, d: number): string {
  const scaled = (10n * BigInt(n) * 10n ** 18n) / BigInt(d);
  const text = scaled.toString().padStart(19, "0");
  return `${text.slice(0, -18)}.${text.slice(-18)}`.replace(/\.?0+$/, "");
}

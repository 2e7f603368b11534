import { expect } from "chai";
import {
  compare,
  convert,
  convertInverse,
  equals,
  formatAmount,
  formatAtScale,
  formatForPeople,
  InvalidAmountError,
  parseAmount,
  percentOf,
  sumOfFractions,
} from "../../services/platform/money.ts";

describe("money", () => {
  it("parses the spec's pattern and formats the canonical form", () => {
    expect(formatAmount(parseAmount("10.50"))).to.equal("10.5");
    expect(formatAmount(parseAmount("0010"))).to.equal("10");
    expect(formatAmount(parseAmount("0.000"))).to.equal("0");
    expect(formatAmount(parseAmount("0.000000000000000001"))).to.equal("0.000000000000000001");
    expect(formatAmount("19.990000000000000000")).to.equal("19.99");
    expect(equals("10.50", "10.5")).to.equal(true);
  });

  it("refuses what the pattern refuses, and what storage cannot hold", () => {
    for (const bad of ["-1", "1e3", "1.", ".1", "0x10", "1.0000000000000000001", "NaN", "Infinity"]) {
      expect(() => parseAmount(bad), bad).to.throw(InvalidAmountError);
    }
    expect(() => parseAmount("100000000000000000000")).to.throw(InvalidAmountError, /10\^20/);
    expect(formatAmount(parseAmount("99999999999999999999.999999999999999999"))).to.equal("99999999999999999999.999999999999999999");
  });

  it("never uses binary floating point (0.1 + 0.2 is exactly 0.3)", () => {
    expect(formatAmount(parseAmount("0.1").plus(parseAmount("0.2")))).to.equal("0.3");
    expect(compare(parseAmount("0.3"), parseAmount("0.1").plus(parseAmount("0.2")))).to.equal(0);
  });

  it("converts with an explicit rounding mode at the target scale", () => {
    // 10 USD at 1 BTC = 60000 USD → 0.000166666… BTC
    expect(formatAtScale(convertInverse(parseAmount("10"), "60000", 8, "up"), 8)).to.equal("0.00016667");
    expect(formatAtScale(convertInverse(parseAmount("10"), "60000", 8, "down"), 8)).to.equal("0.00016666");
    expect(formatAtScale(convert(parseAmount("1.005"), "1", 2, "half-even"), 2)).to.equal("1.00");
    expect(formatAtScale(convert(parseAmount("1.015"), "1", 2, "half-even"), 2)).to.equal("1.02");
    expect(formatAtScale(percentOf(parseAmount("100"), "0.5", 6), 6)).to.equal("0.500000");
  });

  it("formats for people one way for every currency and asset: exact, at least two decimals, thousands grouped", () => {
    const cases: [string, string][] = [
      ["19.9", "19.90"],
      ["19.900000000000000000", "19.90"],
      ["10", "10.00"],
      ["0", "0.00"],
      ["0.00166667", "0.00166667"],
      ["0.006633333333333334", "0.006633333333333334"],
      ["1250", "1,250.00"],
      ["1234567.891", "1,234,567.891"],
      ["99999999999999999999", "99,999,999,999,999,999,999.00"],
    ];
    for (const [amount, shown] of cases) expect(formatForPeople(amount), amount).to.equal(shown);
  });

  it("sums fractions exactly and rounds once (monthly-normalized recurring revenue)", () => {
    const t = (value: string, numerator: number, denominator: number) => ({ value: parseAmount(value), numerator, denominator });
    // 2 × 10.50 a month + 120 a year + 7 every 2 weeks: 21 + 10 + 15.1666… = 46.1666… → 46.17.
    expect(formatAmount(sumOfFractions([t("10.50", 12 * 2, 12), t("120", 1, 12), t("7", 52, 24)], 2, "half-even"))).to.equal("46.17");
    // Three thirds are one, whatever the rounding: each third alone would be 0.33.
    expect(formatAmount(sumOfFractions([t("1", 1, 3), t("1", 1, 3), t("1", 1, 3)], 2, "half-even"))).to.equal("1");
    // A daily price: 1 a day is 365/12 = 30.4166… a month.
    expect(formatAmount(sumOfFractions([t("1", 365, 12)], 2, "half-even"))).to.equal("30.42");
    expect(formatAmount(sumOfFractions([], 2, "half-even"))).to.equal("0");
    expect(() => sumOfFractions([t("1", 1, 0)], 2, "half-even")).to.throw(RangeError);
  });
});

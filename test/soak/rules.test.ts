import { expect } from "chai";
import { growth, keepsGrowing, memoryMonths, periodStartAt, periodsDue } from "./rules.ts";

describe("soak rules (test/soak/rules.ts)", () => {
  it("compares month 3 with month 12 of a year, and scales a shorter run to a quarter in against the end", () => {
    expect(memoryMonths(12)).to.deep.equal({ from: 3, to: 12 });
    expect(memoryMonths(4)).to.deep.equal({ from: 1, to: 4 });
    expect(memoryMonths(8)).to.deep.equal({ from: 2, to: 8 });
    expect(memoryMonths(1)).to.equal(null);
  });

  it("measures growth as a fraction of the first value", () => {
    expect(growth(100, 105)).to.equal(0.05);
    expect(growth(100, 106)).to.be.greaterThan(0.05);
    expect(growth(100, 90)).to.be.lessThan(0);
  });

  it("calls a series growing only when it rose at each of the last three samples and ended above the floor", () => {
    expect(keepsGrowing([0, 10, 200, 300, 400], 100)).to.equal(true);
    expect(keepsGrowing([0, 10, 200, 150, 400], 100)).to.equal(false);
    expect(keepsGrowing([1, 2, 3, 4, 5], 100)).to.equal(false);
    expect(keepsGrowing([500, 500, 500, 500], 100)).to.equal(false);
    expect(keepsGrowing([1, 200, 300], 100)).to.equal(false);
  });

  it("counts billing dates from the anchor, months clamped to a shorter month's last day", () => {
    const jan31 = new Date("2027-01-31T10:00:00Z");
    expect(periodStartAt(jan31, "MONTH", 1, 1).toISOString()).to.equal("2027-02-28T10:00:00.000Z");
    expect(periodStartAt(jan31, "MONTH", 1, 2).toISOString()).to.equal("2027-03-31T10:00:00.000Z");
    expect(periodStartAt(jan31, "WEEK", 1, 2).toISOString()).to.equal("2027-02-14T10:00:00.000Z");
    // The first payment at the anchor, then one per billing date reached.
    expect(periodsDue(jan31, "MONTH", 1, new Date("2027-01-31T10:00:00Z"))).to.equal(1);
    expect(periodsDue(jan31, "MONTH", 1, new Date("2027-02-28T09:59:59Z"))).to.equal(1);
    expect(periodsDue(jan31, "MONTH", 1, new Date("2027-02-28T10:00:00Z"))).to.equal(2);
    expect(periodsDue(jan31, "WEEK", 1, new Date("2027-03-01T00:00:00Z"))).to.equal(5);
    expect(periodsDue(jan31, "MONTH", 1, new Date("2027-01-30T00:00:00Z"))).to.equal(0);
  });
});

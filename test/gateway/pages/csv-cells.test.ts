import { expect } from "chai";
import { safeCell } from "../../../gateway/pages/dashboard/csv-cells.ts";

describe("CSV cells (OWASP CSV injection)", () => {
  it("prefixes a cell a spreadsheet would run as a formula with a single quote", () => {
    for (const formula of ['=HYPERLINK("http://x")', "+1+2", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "-", "=", "-1e5"]) {
      expect(safeCell(formula), formula).to.equal(`'${formula}`);
    }
  });

  it("leaves plain text, empty cells and plain numbers (negative amounts included) as they are", () => {
    for (const value of ["INV-0001", "SUCCEEDED", "", "10", "-12.5", "0.000000000000000001", "a=b"]) expect(safeCell(value), value).to.equal(value);
    expect(safeCell(undefined)).to.equal("");
    expect(safeCell(null)).to.equal("");
  });
});

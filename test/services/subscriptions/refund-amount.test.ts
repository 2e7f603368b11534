import { expect } from "chai";
import { DomainError } from "../../../services/platform/errors.ts";
import { amount, formatAmount } from "../../../services/platform/money.ts";
import { refundAmounts, type RefundableCharge } from "../../../services/subscriptions/refunds/refund-amount.ts";

const btcCharge: RefundableCharge = {
  amount: "10",
  currency: "USD",
  assetAmount: "0.00016667",
  asset: "BTC",
  rate: "0.000016666666666667",
  reservedAmount: "0",
  reservedAssetAmount: "0",
};

const run = (charge: Partial<RefundableCharge>, requested: string | undefined, decimals = 8) => {
  const res = refundAmounts({ ...btcCharge, ...charge }, requested === undefined ? undefined : amount(requested), decimals);
  return { amount: formatAmount(res.amount), assetAmount: formatAmount(res.assetAmount) };
};
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof DomainError ? `${err.code}: ${err.message}` : String(err);
  }
  return "no error";
};

describe("refund amounts (rounding rules)", () => {
  it("no amount: everything that remains, in both units", () => {
    expect(run({}, undefined)).to.deep.equal({ amount: "10", assetAmount: "0.00016667" });
    expect(run({ reservedAmount: "2.5", reservedAssetAmount: "0.00004166" }, undefined)).to.deep.equal({ amount: "7.5", assetAmount: "0.00012501" });
  });

  it("a partial converts at the charge's rate, rounded down to the asset's decimals", () => {
    expect(run({}, "2.5")).to.deep.equal({ amount: "2.5", assetAmount: "0.00004166" });
    expect(run({}, "9.99")).to.deep.equal({ amount: "9.99", assetAmount: "0.0001665" });
    // 18 decimals: 1 × 0.000333333333333333 exactly.
    expect(run({ assetAmount: "0.003333333333333334", asset: "ETH", rate: "0.000333333333333333" }, "1", 18).assetAmount).to.equal("0.000333333333333333");
  });

  it("the refund that completes the charge returns exactly the rest, not its rounded conversion", () => {
    expect(run({ reservedAmount: "5", reservedAssetAmount: "0.00008332" }, "5")).to.deep.equal({ amount: "5", assetAmount: "0.00008335" });
  });

  it("refuses more than remains (saying what remains), nothing left, and less than one asset unit", () => {
    expect(codeOf(() => run({ reservedAmount: "7.5", reservedAssetAmount: "0.00012499" }, "2.51"))).to.equal(
      "REFUND_EXCEEDS_CHARGE: amount: 2.51 USD is more than remains refundable of this charge: 2.5 USD",
    );
    expect(codeOf(() => run({ reservedAmount: "10", reservedAssetAmount: "0.00016667" }, undefined))).to.match(/^REFUND_EXCEEDS_CHARGE: nothing/);
    expect(codeOf(() => run({}, "0.0001"))).to.match(/^INVALID_REQUEST: amount: .*smallest unit of BTC/);
  });
});

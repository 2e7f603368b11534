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

  // Issue 21 (4): the recorded rate is rounded to 18 decimals (half-even), the asset amount came from the exact rate.
  // 1/60,000 BTC per USD is recorded as 0.000016666666666667, a little above the exact rate, so a
  // large partial just below the whole charge converts to more satoshis than the charge took.
  const largeBtcCharge: Partial<RefundableCharge> = { amount: "600000000000", assetAmount: "10000000", rate: "0.000016666666666667" };

  it("a partial never returns more than remains in the asset, even when amount × the recorded rate does", () => {
    // 599999999999.99 × 0.000016666666666667 = 10000000.0000000333… → 10000000.00000003 BTC, above the 10000000 charged.
    expect(run(largeBtcCharge, "599999999999.99")).to.deep.equal({ amount: "599999999999.99", assetAmount: "10000000" });
    // After earlier partials: capped at what they left (10000000 − 0.0001666 BTC), not more.
    expect(run({ ...largeBtcCharge, reservedAmount: "10", reservedAssetAmount: "0.00016666" }, "599999999989.99")).to.deep.equal({
      amount: "599999999989.99",
      assetAmount: "9999999.99983334",
    });
    // Below the cap the rule is unchanged: rounded down.
    expect(run(largeBtcCharge, "300000000000").assetAmount).to.equal("5000000.0000001");
  });

  it("once the whole asset amount is back, what remains in the currency is refused, saying so", () => {
    expect(codeOf(() => run({ ...largeBtcCharge, reservedAmount: "599999999999.99", reservedAssetAmount: "10000000" }, "0.01"))).to.equal(
      "REFUND_EXCEEDS_CHARGE: nothing of this charge remains refundable: its whole asset amount (10000000 BTC) has been refunded",
    );
  });
});

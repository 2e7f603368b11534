import { expect } from "chai";
import { composeEmail } from "../../../services/emails/compose-email.ts";
import { emailViews } from "../../../services/emails/email-views.ts";
import type { EmailKind } from "../../../services/emails/contract.ts";
import { expectOnlyEscaped, HOSTILE } from "../../support/hostile-text.ts";

const DATA: Record<EmailKind, unknown> = {
  upcoming_charge: { date: "2027-05-31T09:00:00.000Z", amount: "20", currency: "EUR", asset: "USDT_TRON", assetAmount: "21.6" },
  charge_at_risk: { date: "2027-05-31T09:00:00.000Z", amount: "20", currency: "EUR", asset: "USDT_TRON", assetAmount: "21.6", shortfall: "6.6" },
  payment_failed: { charge: { amount: "20", currency: "EUR", asset: "USDT_TRON", failureReason: "INSUFFICIENT_FUNDS" } },
  receipt: {
    charge: {
      amount: "20",
      currency: "EUR",
      asset: "USDT_TRON",
      assetAmount: "21.6",
      receiptNumber: "R-000001",
      receiptUrl: "https://pay.example/receipts/t",
      periodStart: "2027-05-01T00:00:00.000Z",
      periodEnd: "2027-06-01T00:00:00.000Z",
    },
  },
};

/** The emails' templates escape names in HTML, keep plain text plain, and keep the subject on one line. */
describe("customer email templates", () => {
  const views = emailViews();
  const context = {
    merchantName: `${HOSTILE}\r\nBcc: x@evil.example`,
    planName: HOSTILE,
    selfServiceUrl: "https://pay.example/wallet/subscriptions",
    subscription: { status: "PAST_DUE", nextRetryAt: new Date("2027-06-02T09:00:00Z") },
  };
  for (const kind of Object.keys(DATA) as EmailKind[]) {
    it(`${kind}: HTML escapes every name, the text keeps it as written, the subject is one line starting with the merchant's name`, () => {
      const email = composeEmail(views, kind, DATA[kind], context);
      expect(expectOnlyEscaped(email.html, kind)).to.be.greaterThan(1);
      expect(email.text).to.include(HOSTILE);
      expect(email.subject).not.to.match(/[\r\n]/);
      expect(email.subject.startsWith(HOSTILE)).to.equal(true);
    });
  }
  it("payment failed names the next retry; at risk names the shortfall; the receipt links its page and PDF", () => {
    const plain = { ...context, merchantName: "Acme", planName: "Pro" };
    expect(composeEmail(views, "payment_failed", DATA.payment_failed, plain).text).to.include("Next retry: 2027-06-02 09:00 UTC");
    expect(composeEmail(views, "payment_failed", DATA.payment_failed, { ...plain, subscription: { status: "UNPAID", nextRetryAt: null } }).text).to.include(
      "No more tries are scheduled",
    );
    expect(composeEmail(views, "charge_at_risk", DATA.charge_at_risk, plain).text)
      .to.include("Short by: 6.60 USDT_TRON")
      .and.include(plain.selfServiceUrl);
    const receipt = composeEmail(views, "receipt", DATA.receipt, plain);
    expect(receipt.text).to.include("View your receipt: https://pay.example/receipts/t").and.include("https://pay.example/receipts/t.pdf");
  });
});

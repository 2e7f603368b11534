import { expect } from "chai";
import { cancellationText, chargeStatusText, subscriptionStatusText } from "../../../gateway/pages/page-text.ts";
import { CHARGE_STATUSES, SUBSCRIPTION_STATUSES } from "../../../services/subscriptions/contract.ts";

describe("page text: codes become words a customer reads", () => {
  it("every subscription and charge status has its own words (none falls back to the code)", () => {
    for (const status of SUBSCRIPTION_STATUSES) expect(subscriptionStatusText(status), status).not.to.match(/[A-Z]{2,}|_/);
    for (const status of CHARGE_STATUSES) expect(chargeStatusText(status), status).not.to.match(/[A-Z]{2,}|_/);
  });

  it("reasons read as words, with the merchant named", () => {
    expect(cancellationText("CUSTOMER_CANCELLED", "Acme")).to.equal("by you");
    expect(cancellationText("MERCHANT_CANCELLED", "Acme")).to.equal("by Acme");
    expect(chargeStatusText("FAILED", "INSUFFICIENT_FUNDS")).to.equal("Failed: balance too low");
    // A code added later still reads as words, never as a code, and nothing comes from Object.prototype.
    expect(subscriptionStatusText("SOME_NEW_STATUS")).to.equal("Some new status");
    expect(subscriptionStatusText("constructor")).to.equal("Constructor");
    expect(chargeStatusText("FAILED", "toString")).to.equal("Failed: tostring");
  });
});

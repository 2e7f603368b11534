import { expect } from "chai";
import { ConnectError } from "@connectrpc/connect";
import { errorCodeOf } from "../../../services/platform/rpc/error-code.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { balances, createPlan, createSubscription, createWalletUser, PIN, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { advanceBy, chargesOf, DAY, waitForStatus } from "../../support/billing.ts";
import { approvedSubscription, changeBody } from "../../support/change-sessions.ts";
import { alertOf, hostedPage } from "../../support/hosted-page.ts";

/**
 * Issue 21 (11): a price that, converted into an asset, is more than a charge
 * can hold (numeric(38,18): less than 10^20) is "this asset cannot pay this
 * price" on every path — the hosted page, the customer's funding change, a
 * plan change, a renewal — never a database overflow answered with a 500.
 * 99,999,999,999,999,999,999 BTC is 5,999,999,999,999,999,999,940,000 USDT at the sandbox's 60,000 USD/BTC.
 */
describe("prices an asset cannot hold once converted", () => {
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  const HUGE_BTC = { amount: "99999999999999999999", currency: "BTC" };

  const sys = useTestSystem();
  before(async () => {
    api = (await sys.createMerchant("Huge prices")).api;
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  async function refusal(call: Promise<unknown>): Promise<{ error: string | undefined; message: string }> {
    try {
      await call;
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      return { error: errorCodeOf(err), message: err.rawMessage };
    }
    throw new Error("expected the call to be refused");
  }

  it("the hosted page lists only assets that can hold the price and answers the others with the limit, not a 500", async () => {
    const plan = await createPlan(api, HUGE_BTC);
    const user = await createWalletUser(sys, { USDT_TRON: "100", ETH: "1", BTC: "1" });
    const s = await createSubscription(api, plan.id, user.id);
    const page = hostedPage(sys, new URL(s.authorizationUrl).pathname);
    await page.logIn(user);

    // The case: approving with USDT_TRON or ETH (a page opened before a rate moved, or a hand-made form).
    for (const asset of ["USDT_TRON", "ETH"]) {
      const res = await page.post({ action: "approve", fundingAsset: asset, pin: PIN });
      expect(res.status, res.html.slice(0, 500)).to.equal(422);
      expect(alertOf(res.html)).to.equal(
        `Paid in ${asset}, this price would be more than one payment can hold (it must be less than 100,000,000,000,000,000,000 ${asset}). Choose another asset.`,
      );
    }
    // The page offers only what can pay.
    const form = await page.get();
    expect(form.status).to.equal(200);
    expect(form.html).to.include('name="fundingAsset" value="BTC"');
    expect(form.html).not.to.include('value="USDT_TRON"');
    expect(form.html).not.to.include('value="ETH"');
    expect((await api.get(`/api/v1/subscriptions/${s.subscriptionId}`)).body.status).to.equal("PENDING_APPROVAL");
    expect(await chargesOf(sys, s.subscriptionId)).to.deep.equal([]);
    expect(await balances(sys, user.id)).to.include({ USDT_TRON: "100", ETH: "1", BTC: "1" });

    // Behind the page, the service names the field, the converted amount and the limit.
    const direct = await refusal(rpc.client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" }));
    expect(direct).to.deep.equal({
      error: "ASSET_AMOUNT_TOO_LARGE",
      message: "fundingAsset: 99999999999999999999 BTC is 5999999999999999999940000 USDT_TRON, more than one charge can hold (less than 10^20 USDT_TRON)",
    });
  });

  it("a trial cannot start on such an asset either (its first renewal could never be charged)", async () => {
    const plan = await createPlan(api, { ...HUGE_BTC, trialDays: 7 });
    const user = await createWalletUser(sys, { ETH: "1" });
    const s = await createSubscription(api, plan.id, user.id);
    const res = await refusal(rpc.client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: user.id, fundingAsset: "ETH" }));
    expect(res.error).to.equal("ASSET_AMOUNT_TOO_LARGE");
    expect(res.message).to.contain("1999999999999999999980 ETH").and.to.contain("less than 10^20 ETH");
    expect((await api.get(`/api/v1/subscriptions/${s.subscriptionId}`)).body.status).to.equal("PENDING_APPROVAL");
  });

  it("the customer's funding change to such an asset is refused naming the limit", async () => {
    const plan = await createPlan(api, { ...HUGE_BTC, trialDays: 7 });
    const user = await createWalletUser(sys, { BTC: "1", USDT_TRON: "5" });
    const subscriptionId = await approvedSubscription(api, rpc.client, plan.id, user.id, "BTC");
    const res = await refusal(rpc.client.changeFundingAsset({ walletUserId: user.id, subscriptionId, asset: "USDT_TRON" }));
    expect(res).to.deep.equal({
      error: "ASSET_AMOUNT_TOO_LARGE",
      message: "asset: 99999999999999999999 BTC is 5999999999999999999940000 USDT_TRON, more than one charge can hold (less than 10^20 USDT_TRON)",
    });
    expect((await api.get(`/api/v1/subscriptions/${subscriptionId}`)).body.fundingAsset).to.equal("BTC");
  });

  it("a plan change to a price the funding asset cannot hold is a 409 naming the limit", async () => {
    const small = await createPlan(api, { amount: "5" });
    const huge = await createPlan(api, HUGE_BTC);
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const subscriptionId = await approvedSubscription(api, rpc.client, small.id, user.id);
    const res = await api.post(`/api/v1/subscriptions/${subscriptionId}/change-sessions`, changeBody(huge.id));
    expect(res.status, res.text).to.equal(409);
    expect(res.body).to.deep.include({
      error: "ASSET_AMOUNT_TOO_LARGE",
      message: "requestedPlanId: 99999999999999999999 BTC is 5999999999999999999940000 USDT_TRON, more than one charge can hold (less than 10^20 USDT_TRON)",
    });
    // The immediate charge is checked too: 10^19 BTC fits no USDT charge, whatever the plan's own price.
    const modest = await createPlan(api, { amount: "1", currency: "BTC" });
    const immediate = await api.post(
      `/api/v1/subscriptions/${subscriptionId}/change-sessions`,
      changeBody(modest.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "10000000000000000000" }),
    );
    expect(immediate.status, immediate.text).to.equal(409);
    expect(immediate.body.error).to.equal("ASSET_AMOUNT_TOO_LARGE");
    expect(immediate.body.message).to.match(/^immediateChargeAmount: 10000000000000000000 BTC is 600000000000000000000000 USDT_TRON/);
  });

  it("a renewal whose price no longer fits its funding asset fails the period as CONVERSION_UNAVAILABLE, no database error", async () => {
    const plan = await createPlan(api, { ...HUGE_BTC, trialDays: 1 });
    const user = await createWalletUser(sys, { BTC: "1" });
    const subscriptionId = await approvedSubscription(api, rpc.client, plan.id, user.id, "BTC");
    // What a rate move would do to a live subscription (the API refuses to set it up this way).
    await sys.sql("update subscriptions set funding_asset = 'USDT_TRON' where id = ?", [subscriptionId]);
    await advanceBy(sys, DAY + 120);
    await waitForStatus(api, subscriptionId, "PAST_DUE", 20_000);
    const charges = await chargesOf(sys, subscriptionId);
    expect(charges.map((c) => [c.status, c.failure_reason, c.asset_amount])).to.deep.equal([["FAILED", "CONVERSION_UNAVAILABLE", null]]);
  });
});

import { expect } from "chai";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { RpcClients } from "../../../services/platform/rpc/clients.ts";
import { balances, createPlan, createSubscription, createWalletUser, credit, eventsOf, subscriptionsRpc } from "../../support/subscriptions.ts";
import { approvedSubscription, createChange, changeOf } from "../../support/change-sessions.ts";
import { advanceTo, chargesOf, subscriptionOf, waitForCharges, waitForStatus } from "../../support/billing.ts";
import { errorCodeOf } from "../../../services/platform/rpc/error-code.ts";
import { make } from "../../support/factories/index.ts";

/** The customer's RPCs (wallet app, self-service page) against the real stack: keyed by wallet user, never by merchant. */
describe("customer self-service RPCs", () => {
  let acme: ApiClient;
  let acmeId: string;
  let globex: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;

  const sys = useTestSystem();
  before(async () => {
    ({ api: acme, id: acmeId } = await sys.createMerchant("Acme Streaming"));
    globex = (await sys.createMerchant("Globex News")).api;
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
  });
  after(async () => {
    rpc?.close();
  });

  async function refusal(call: Promise<unknown>): Promise<{ code: Code; error: string | undefined; message: string }> {
    try {
      await call;
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      return { code: err.code, error: errorCodeOf(err), message: err.rawMessage };
    }
    throw new Error("expected the call to be refused");
  }

  it("lists every subscription of the customer across merchants, live ones first, with merchant, plan, charges and funding options", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "100", USDC_ETH: "5" });
    const stranger = await createWalletUser(sys, { USDT_TRON: "100" });
    const acmePlan = await createPlan(acme, { name: "Acme Pro", amount: "10", maximumChargeAmount: "12" });
    const globexPlan = await createPlan(globex, { name: "Globex Daily", amount: "3", interval: "WEEK", trialDays: 7 });
    const ended = await approvedSubscription(acme, client, acmePlan.id, user.id);
    await acme.post(`/api/v1/subscriptions/${ended}/cancel`);
    const active = await approvedSubscription(acme, client, acmePlan.id, user.id);
    const trialing = await approvedSubscription(globex, client, globexPlan.id, user.id);
    await approvedSubscription(acme, client, acmePlan.id, stranger.id);

    const res = await client.listCustomerSubscriptions({ walletUserId: user.id });
    expect(res.subscriptions.map((s) => s.subscription!.id)).to.deep.equal([trialing, active, ended]);
    expect(res.subscriptions.map((s) => s.live)).to.deep.equal([true, true, false]);
    const [t, a, e] = res.subscriptions;
    expect(t!.merchantName).to.equal("Globex News");
    expect(t!.plan).to.include({ name: "Globex Daily", amount: "3", currency: "USD", interval: "WEEK", trialDays: 7 });
    expect(t!.subscription!.status).to.equal("TRIALING");
    expect(t!.charges).to.have.length(0);
    expect(a!.merchantName).to.equal("Acme Streaming");
    expect(a!.plan).to.include({ name: "Acme Pro", maximumChargeAmount: "12" });
    expect(a!.charges.map((c) => [c.status, c.amount, c.asset, c.assetAmount])).to.deep.equal([["SUCCEEDED", "10", "USDT_TRON", "10"]]);
    // Every account that can pay USD: same-currency assets first, then convertible ones, each with its balance.
    expect(a!.fundingOptions.map((o) => [o.asset, o.balance, o.sufficient])).to.deep.equal([
      ["USDC_ETH", "5", false],
      ["USDT_TRON", "80", true],
      ["BTC", "0", false],
      ["ETH", "0", false],
    ]);
    expect(e!.subscription!.status).to.equal("CANCELLED");
    expect(e!.fundingOptions).to.have.length(0);

    // Pages: live first, then ended, nothing twice, nothing of someone else's.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listCustomerSubscriptions({ walletUserId: user.id, limit: 1, cursor });
      seen.push(...page.subscriptions.map((s) => s.subscription!.id));
      cursor = page.hasMore ? page.nextCursor : undefined;
    } while (cursor);
    expect(seen).to.deep.equal([trialing, active, ended]);

    expect((await client.listCustomerSubscriptions({ walletUserId: (await createWalletUser(sys)).id })).subscriptions).to.have.length(0);
    expect((await refusal(client.listCustomerSubscriptions({ walletUserId: "nope" }))).code).to.equal(Code.InvalidArgument);
    expect((await refusal(client.listCustomerSubscriptions({ walletUserId: user.id, cursor: "forged" }))).code).to.equal(Code.InvalidArgument);
  });

  it("cancels for the customer: CUSTOMER_CANCELLED, subscription.cancelled, the scheduled plan change cancelled with it", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const plan = await createPlan(acme, { amount: "10" });
    const bigger = await createPlan(acme, { name: "Bigger", amount: "20" });
    const id = await approvedSubscription(acme, client, plan.id, user.id);
    const change = await createChange(acme, id, bigger.id, { effectiveMode: "NEXT_BILLING" });
    const token = new URL(change.approvalUrl).pathname.split("/").pop()!;
    await client.approveChangeSession({ token, walletUserId: user.id });
    expect((await changeOf(acme, id, change.id)).status).to.equal("SCHEDULED");

    const res = await client.cancelSubscriptionForCustomer({ walletUserId: user.id, subscriptionId: id });
    expect(res.subscription).to.include({ status: "CANCELLED", cancellationReason: "CUSTOMER_CANCELLED" });
    const seen = await subscriptionOf(acme, id);
    expect(seen).to.include({ status: "CANCELLED", cancellationReason: "CUSTOMER_CANCELLED", nextBillingAt: null });
    expect(await changeOf(acme, id, change.id)).to.include({ status: "CANCELLED", cancellationReason: "SUBSCRIPTION_CANCELLED" });
    const events = await eventsOf(sys, id);
    const cancelled = events.filter((e) => e.type === "subscription.cancelled");
    expect(cancelled).to.have.length(1);
    expect(cancelled[0]!.data).to.include({ status: "CANCELLED", cancellationReason: "CUSTOMER_CANCELLED" });

    // Twice: the status machine refuses (409), nothing more recorded.
    expect((await refusal(client.cancelSubscriptionForCustomer({ walletUserId: user.id, subscriptionId: id }))).error).to.equal("INVALID_STATUS_TRANSITION");
  });

  it("never lets a customer act on someone else's subscription: the same NOT_FOUND as an unknown id, nothing changes", async () => {
    const owner = await createWalletUser(sys, { USDT_TRON: "100", USDC_ETH: "100" });
    const intruder = await createWalletUser(sys, { USDT_TRON: "100", USDC_ETH: "100" });
    const plan = await createPlan(acme, { amount: "10" });
    const id = await approvedSubscription(acme, client, plan.id, owner.id);

    const unknown = await refusal(client.cancelSubscriptionForCustomer({ walletUserId: intruder.id, subscriptionId: "00000000-0000-4000-8000-000000000000" }));
    const others = await refusal(client.cancelSubscriptionForCustomer({ walletUserId: intruder.id, subscriptionId: id }));
    expect(others.code).to.equal(Code.NotFound);
    expect(others.error).to.equal("SUBSCRIPTION_NOT_FOUND");
    expect(others.message.replace(id, "<id>")).to.equal(unknown.message.replace("00000000-0000-4000-8000-000000000000", "<id>"));
    const change = await refusal(client.changeFundingAsset({ walletUserId: intruder.id, subscriptionId: id, asset: "USDC_ETH" }));
    expect(change.error).to.equal("SUBSCRIPTION_NOT_FOUND");
    expect(await subscriptionOf(acme, id)).to.include({ status: "ACTIVE", fundingAsset: "USDT_TRON" });
    const types = (await eventsOf(sys, id)).map((e) => e.type);
    expect(types).not.to.include("subscription.cancelled");
    expect(types).not.to.include("subscription.funding_asset_changed");

    // Validated input: the wallet user id must be a UUID; the merchant id is not an input at all.
    expect((await refusal(client.cancelSubscriptionForCustomer({ walletUserId: "", subscriptionId: id }))).code).to.equal(Code.InvalidArgument);
    expect((await refusal(client.changeFundingAsset({ walletUserId: "x", subscriptionId: id, asset: "USDC_ETH" }))).code).to.equal(Code.InvalidArgument);
  });

  it("changes the funding asset: later charges use it, the merchant sees it, one event with the previous asset", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "100", USDC_ETH: "100" });
    const plan = await createPlan(acme, { amount: "10", interval: "DAY" });
    const id = await approvedSubscription(acme, client, plan.id, user.id);

    const res = await client.changeFundingAsset({ walletUserId: user.id, subscriptionId: id, asset: "USDC_ETH" });
    expect(res.subscription!.fundingAsset).to.equal("USDC_ETH");
    expect(res.retried).to.equal(false);
    const sub = await subscriptionOf(acme, id);
    expect(sub.fundingAsset).to.equal("USDC_ETH");
    const events = (await eventsOf(sys, id)).filter((e) => e.type === "subscription.funding_asset_changed");
    expect(events).to.have.length(1);
    expect(events[0]!.data).to.include({ fundingAsset: "USDC_ETH", previousFundingAsset: "USDT_TRON", id });

    // The same asset again changes nothing and records nothing.
    await client.changeFundingAsset({ walletUserId: user.id, subscriptionId: id, asset: "USDC_ETH" });
    expect((await eventsOf(sys, id)).filter((e) => e.type === "subscription.funding_asset_changed")).to.have.length(1);

    // The next renewal is paid from the new asset.
    await advanceTo(sys, new Date(Date.parse(sub.nextBillingAt) + 60_000));
    await waitForStatus(acme, id, "ACTIVE");
    await waitForCharges(sys, id, 2);
    const assets = await sys.sql<{ asset: string }>("select asset from subscription_charges where subscription_id = ? order by period_index", [id]);
    expect(assets.map((c) => c.asset)).to.deep.equal(["USDT_TRON", "USDC_ETH"]);

    // Refusals: an asset the wallet does not have, a malformed one, an ended subscription.
    expect((await refusal(client.changeFundingAsset({ walletUserId: user.id, subscriptionId: id, asset: "DOGE" }))).error).to.equal(
      "FUNDING_ASSET_NOT_SUPPORTED",
    );
    const bad = await refusal(client.changeFundingAsset({ walletUserId: user.id, subscriptionId: id, asset: "usdt; drop" }));
    expect(bad.code).to.equal(Code.InvalidArgument);
    expect(bad.message).to.contain("asset");
    await client.cancelSubscriptionForCustomer({ walletUserId: user.id, subscriptionId: id });
    expect((await refusal(client.changeFundingAsset({ walletUserId: user.id, subscriptionId: id, asset: "USDT_TRON" }))).error).to.equal(
      "SUBSCRIPTION_NOT_CHANGEABLE",
    );
  });

  it("a PAST_DUE subscription is retried at once when the new asset covers the amount due", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "10" });
    const plan = await createPlan(acme, { amount: "10", interval: "MONTH" });
    const id = await approvedSubscription(acme, client, plan.id, user.id);
    const active = await subscriptionOf(acme, id);
    await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
    await waitForStatus(acme, id, "PAST_DUE");
    await credit(sys, user.id, "USDC_ETH", "25");

    const res = await client.changeFundingAsset({ walletUserId: user.id, subscriptionId: id, asset: "USDC_ETH" });
    expect(res.retried).to.equal(true);
    expect(res.subscription).to.include({ status: "ACTIVE", fundingAsset: "USDC_ETH" });
    const after = await subscriptionOf(acme, id);
    expect(after).to.include({ status: "ACTIVE", currentPeriodStart: active.nextBillingAt, pastDueSince: null });
    const [last] = await sys.sql("select status, asset from subscription_charges where subscription_id = ? order by period_index desc, attempt desc limit 1", [
      id,
    ]);
    expect(last).to.include({ status: "SUCCEEDED", asset: "USDC_ETH" });
    const types = (await eventsOf(sys, id)).map((e) => e.type);
    expect(types.slice(types.indexOf("subscription.funding_asset_changed"))).to.deep.equal([
      "subscription.funding_asset_changed",
      "subscription.charge_succeeded",
      "subscription.renewed",
    ]);
  });

  it("does not retry at once when the new asset does not cover the amount due", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "10" });
    const plan = await createPlan(acme, { amount: "10", interval: "MONTH" });
    const id = await approvedSubscription(acme, client, plan.id, user.id);
    const active = await subscriptionOf(acme, id);
    await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
    await waitForStatus(acme, id, "PAST_DUE");
    const failedBefore = (await chargesOf(sys, id)).length;
    await credit(sys, user.id, "USDC_ETH", "2");

    const res = await client.changeFundingAsset({ walletUserId: user.id, subscriptionId: id, asset: "USDC_ETH" });
    expect(res.retried).to.equal(false);
    expect(res.subscription).to.include({ status: "PAST_DUE", fundingAsset: "USDC_ETH" });
    expect(await chargesOf(sys, id)).to.have.length(failedBefore);
  });

  it("a pending authorization can be cancelled by its customer too (nothing was charged)", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const plan = await createPlan(acme);
    const s = await createSubscription(acme, plan.id, user.id);
    const res = await client.cancelSubscriptionForCustomer({ walletUserId: user.id, subscriptionId: s.subscriptionId });
    expect(res.subscription).to.include({ status: "CANCELLED", cancellationReason: "CUSTOMER_CANCELLED" });
    expect(res.subscription!.authorization!.status).to.equal("CANCELLED");
  });

  it("waits for a charge in flight before cancelling, as the merchant's cancel does: debited once, then CANCELLED", async () => {
    const plan = await createPlan(acme, { amount: "4" });
    const user = await createWalletUser(sys, { USDT_TRON: "10" });
    const s = await createSubscription(acme, plan.id, user.id);
    // What a crashed approval leaves: a PENDING first charge whose lease ran out, the wallet already debited.
    const { id: chargeId } = await make.charge(sys, { subscriptionId: s.subscriptionId, purpose: "FIRST_PAYMENT", leaseSeconds: -1 });
    const wallets = new RpcClients(sys.config.internalApiToken);
    try {
      await wallets.client(WalletService, `http://127.0.0.1:${sys.system.servicesPort}`).charge({
        idempotencyKey: `subscription-charge-${chargeId}`,
        walletUserId: user.id,
        merchantId: acmeId,
        asset: "USDT_TRON",
        amount: "4",
        description: "crashed before recording",
      });
    } finally {
      wallets.close();
    }

    const res = await client.cancelSubscriptionForCustomer({ walletUserId: user.id, subscriptionId: s.subscriptionId });
    expect(res.subscription).to.include({ status: "CANCELLED", cancellationReason: "CUSTOMER_CANCELLED" });
    expect(res.subscription!.activatedAt).to.not.equal(undefined);
    expect((await eventsOf(sys, s.subscriptionId)).map((e) => e.type)).to.deep.equal([
      "subscription.created",
      "subscription.charge_succeeded",
      "subscription.activated",
      "subscription.cancelled",
    ]);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("6");
  });
});

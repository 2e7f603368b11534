import { expect } from "chai";
import type { Client } from "@connectrpc/connect";
import { ApprovalOutcome, type SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { balances, createPlan, createSubscription, createWalletUser, eventsOf, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { advanceTo, chargesOf, debitsOf, subscriptionOf, waitForCharges, waitForQuiet } from "../../support/billing.ts";

/** Free plans, coupons and 100 % discounts through the real engine: approval, the renewal sweep and batches, the ledger (issue 25). */
describe("pricing: discounted and free periods through the renewal engine", () => {
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;

  const sys = useTestSystem();
  before(async () => {
    api = (await sys.createMerchant("Discounts")).api;
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
  });
  after(async () => {
    rpc?.close();
  });

  async function approve(subscription: { authorizationUrl: string }, userId: string) {
    const res = await client.approveAuthorization({ token: tokenOf(subscription.authorizationUrl), walletUserId: userId, fundingAsset: "USDT_TRON" });
    if (res.outcome !== ApprovalOutcome.APPROVED) throw new Error(`approval refused: ${res.message}`);
  }

  /** Moves the clock past the subscription's next billing date and waits for that charge. */
  async function renewOnce(id: string, count: number) {
    const sub = await subscriptionOf(api, id);
    await advanceTo(sys, new Date(new Date(sub.nextBillingAt).getTime() + 1000));
    await waitForCharges(sys, id, count);
  }

  async function clean() {
    await waitForQuiet(sys);
    const check = await sys.admin.get("/admin/v1/ledger/check");
    expect(check.body.ok, JSON.stringify(check.body)).to.equal(true);
    const recon = await sys.admin.get("/admin/v1/reconciliation");
    expect(recon.body, JSON.stringify(recon.body)).to.include({ status: "ok" });
    expect(recon.body.anomalies).to.deep.equal([]);
  }

  it("30 % off REPEATING 3 over 5 monthly renewals: 3 discounted (13.93), then full (19.9); the discount ends after the third", async () => {
    const plan = await createPlan(api, { amount: "19.90", currency: "USD", interval: "MONTH" });
    const user = await createWalletUser(sys, { USDT_TRON: "200" });
    const s = await createSubscription(api, plan.id, user.id);
    await approve(s, user.id);
    const coupon = (await api.post("/api/v1/coupons", { name: "30 off", percentOff: "30", duration: "REPEATING", durationInPeriods: 3 })).body;
    expect((await api.post(`/api/v1/subscriptions/${s.subscriptionId}/discount`, { couponId: coupon.id })).status).to.equal(200);

    for (let n = 2; n <= 6; n += 1) await renewOnce(s.subscriptionId, n);
    const charges = await chargesOf(sys, s.subscriptionId);
    expect(charges.map((c) => [c.period_index, c.status, c.amount.replace(/\.?0+$/, ""), (c.asset_amount ?? "").replace(/\.?0+$/, "")])).to.deep.equal([
      [0, "SUCCEEDED", "19.9", "19.9"],
      [1, "SUCCEEDED", "13.93", "13.93"],
      [2, "SUCCEEDED", "13.93", "13.93"],
      [3, "SUCCEEDED", "13.93", "13.93"],
      [4, "SUCCEEDED", "19.9", "19.9"],
      [5, "SUCCEEDED", "19.9", "19.9"],
    ]);
    // 200 − 19.9 × 3 − 13.93 × 3
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("98.51");
    const list = (await api.get(`/api/v1/subscriptions/${s.subscriptionId}/charges?limit=10`)).body.data;
    expect(list.find((c: any) => c.periodIndex === 2)).to.include({
      subtotal: "19.9",
      discountAmount: "5.97",
      creditApplied: "0",
      amount: "13.93",
      couponId: coupon.id,
    });
    expect(list.find((c: any) => c.periodIndex === 4)).to.include({ subtotal: "19.9", discountAmount: "0", amount: "19.9", couponId: null });
    expect((await subscriptionOf(api, s.subscriptionId)).discount).to.equal(null);
    const types = (await eventsOf(sys, s.subscriptionId)).map((e) => e.type).filter((t) => t.includes("discount"));
    expect(types).to.deep.equal(["subscription.discount_applied", "subscription.discount_ended"]);
    const ended = (await eventsOf(sys, s.subscriptionId)).find((e) => e.type === "subscription.discount_ended")!;
    expect(ended.data).to.deep.include({ reason: "PERIODS_USED" });
    expect(ended.data.endedDiscount).to.include({ couponId: coupon.id, periodsRemaining: 1 });
    await clean();
  });

  it("a 100 % coupon: zero charges SUCCEEDED with no ledger movement and no receipt, the usual events", async () => {
    const plan = await createPlan(api, { amount: "15", currency: "USD", interval: "MONTH" });
    const user = await createWalletUser(sys, { USDT_TRON: "5" });
    const coupon = (await api.post("/api/v1/coupons", { name: "Free", percentOff: "100", duration: "FOREVER" })).body;
    const s = await createSubscription(api, plan.id, user.id, { couponId: coupon.id });
    await approve(s, user.id);
    await renewOnce(s.subscriptionId, 2);
    await renewOnce(s.subscriptionId, 3);
    const charges = await chargesOf(sys, s.subscriptionId);
    expect(charges.map((c) => [c.status, Number(c.amount), Number(c.asset_amount)])).to.deep.equal([
      ["SUCCEEDED", 0, 0],
      ["SUCCEEDED", 0, 0],
      ["SUCCEEDED", 0, 0],
    ]);
    expect(await debitsOf(sys, s.subscriptionId)).to.equal(0);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("5");
    const list = (await api.get(`/api/v1/subscriptions/${s.subscriptionId}/charges`)).body.data;
    expect(list[0]).to.include({
      amount: "0",
      assetAmount: "0",
      subtotal: "15",
      discountAmount: "15",
      walletTransactionId: null,
      receiptNumber: null,
      receiptUrl: null,
    });
    const types = (await eventsOf(sys, s.subscriptionId)).map((e) => e.type).filter((t) => t !== "subscription.charge_upcoming");
    expect(types).to.deep.equal([
      "subscription.created",
      "subscription.discount_applied",
      "subscription.charge_succeeded",
      "subscription.activated",
      "subscription.charge_succeeded",
      "subscription.renewed",
      "subscription.charge_succeeded",
      "subscription.renewed",
    ]);
    expect((await subscriptionOf(api, s.subscriptionId)).discount).to.include({ couponId: coupon.id, periodsRemaining: null });
    await clean();
  });

  it("a free plan (amount 0): approved like any other, zero charges every period, no ledger movement, reconciliation clean", async () => {
    const plan = await createPlan(api, { amount: "0", currency: "EUR", interval: "WEEK" });
    expect(plan.amount).to.equal("0");
    const user = await createWalletUser(sys, { USDT_TRON: "0.5" });
    const s = await createSubscription(api, plan.id, user.id);
    await approve(s, user.id);
    expect((await subscriptionOf(api, s.subscriptionId)).status).to.equal("ACTIVE");
    await renewOnce(s.subscriptionId, 2);
    const charges = await chargesOf(sys, s.subscriptionId);
    expect(charges.map((c) => [c.status, Number(c.amount), Number(c.asset_amount)])).to.deep.equal([
      ["SUCCEEDED", 0, 0],
      ["SUCCEEDED", 0, 0],
    ]);
    expect(await debitsOf(sys, s.subscriptionId)).to.equal(0);
    const types = (await eventsOf(sys, s.subscriptionId)).map((e) => e.type).filter((t) => t !== "subscription.charge_upcoming");
    expect(types).to.deep.equal([
      "subscription.created",
      "subscription.charge_succeeded",
      "subscription.activated",
      "subscription.charge_succeeded",
      "subscription.renewed",
    ]);
    await clean();
  });

  it("an amount-off coupon never takes a charge below 0; ONCE discounts one charge; a batch of mixed discounts renews set-based", async () => {
    const plan = await createPlan(api, { amount: "4", currency: "USD", interval: "MONTH" });
    const big = (await api.post("/api/v1/coupons", { name: "Ten off", amountOff: "10", currency: "USD", duration: "ONCE" })).body;
    const half = (await api.post("/api/v1/coupons", { name: "Half", percentOff: "50", duration: "FOREVER" })).body;
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const subs = [];
    for (const body of [{ couponId: big.id }, { couponId: half.id }, {}, { couponId: half.id }]) {
      const s = await createSubscription(api, plan.id, user.id, body);
      await approve(s, user.id);
      subs.push(s.subscriptionId);
    }
    // All four come due together: one sweep, one batch.
    const first = await subscriptionOf(api, subs[3]!);
    await advanceTo(sys, new Date(new Date(first.nextBillingAt).getTime() + 1000));
    for (const id of subs) await waitForCharges(sys, id, 2);
    const amounts = await Promise.all(subs.map(async (id) => (await chargesOf(sys, id)).map((c) => Number(c.amount))));
    expect(amounts).to.deep.equal([
      [0, 4],
      [2, 2],
      [4, 4],
      [2, 2],
    ]);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("80"); // 100 − (0 + 4) − (2 + 2) − (4 + 4) − (2 + 2)
    await clean();
  });
});

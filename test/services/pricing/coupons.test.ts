import { expect } from "chai";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { createPlan, createWalletUser, eventsOf, subscriptionBody, subscriptionsRpc, type WalletUserFixture } from "../../support/subscriptions.ts";
import { serviceNow } from "../../support/billing.ts";

/** Coupons and promotion codes over REST (issue 25): every rule and error code, isolation, redemption counts under concurrency. */
describe("pricing: coupons and promotion codes", () => {
  let api: ApiClient;
  let other: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;
  let user: WalletUserFixture;

  const sys = useTestSystem();
  before(async () => {
    api = (await sys.createMerchant("Coupons")).api;
    other = (await sys.createMerchant("Other")).api;
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
    user = await createWalletUser(sys, { USDT_TRON: "1000" });
  });
  after(async () => {
    rpc?.close();
  });

  const coupon = async (body: Record<string, unknown>) => {
    const res = await api.post("/api/v1/coupons", { name: "Spring", duration: "ONCE", percentOff: "30", ...body });
    if (res.status !== 201) throw new Error(`coupon create failed: ${res.status} ${res.text}`);
    return res.body;
  };

  it("creates, reads, lists and deletes a coupon; coupon.created; another merchant's is 404", async () => {
    const res = await api.post("/api/v1/coupons", {
      name: "Launch",
      percentOff: "30.50",
      duration: "REPEATING",
      durationInPeriods: 3,
      maxRedemptions: 10,
      metadata: { campaign: "x" },
    });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({
      object: "coupon",
      name: "Launch",
      percentOff: "30.5",
      amountOff: null,
      currency: null,
      duration: "REPEATING",
      durationInPeriods: 3,
      maxRedemptions: 10,
      timesRedeemed: 0,
      valid: true,
    });
    expect((await api.get(`/api/v1/coupons/${res.body.id}`)).body).to.deep.equal(res.body);
    expect((await api.get("/api/v1/coupons")).body.data.map((c: any) => c.id)).to.include(res.body.id);
    const [event] = await sys.sql("select type, data from events where type = 'coupon.created' and data->>'id' = ?", [res.body.id]);
    expect(event.data).to.deep.equal(res.body);

    expect((await other.get(`/api/v1/coupons/${res.body.id}`)).status).to.equal(404);
    expect((await other.get(`/api/v1/coupons/${res.body.id}`)).body.error).to.equal("COUPON_NOT_FOUND");
    expect((await other.delete(`/api/v1/coupons/${res.body.id}`)).status).to.equal(404);
    expect((await other.get("/api/v1/coupons")).body.data).to.deep.equal([]);

    const deleted = await api.delete(`/api/v1/coupons/${res.body.id}`);
    expect(deleted.status).to.equal(200);
    expect(deleted.body.valid).to.equal(false);
    expect((await api.delete(`/api/v1/coupons/${res.body.id}`)).body.valid).to.equal(false);
  });

  it("refuses every bad combination with a 400 naming the field", async () => {
    const future = new Date((await serviceNow(sys)).getTime() + 86_400_000).toISOString();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: "x", duration: "ONCE" }, /^percentOff: one of percentOff or amountOff is required/],
      [{ name: "x", duration: "ONCE", percentOff: "10", amountOff: "1", currency: "USD" }, /^percentOff: send either percentOff or amountOff, not both/],
      [{ name: "x", duration: "ONCE", percentOff: "0" }, /^percentOff: must be greater than 0/],
      [{ name: "x", duration: "ONCE", percentOff: "100.01" }, /^percentOff: must be greater than 0 and at most 100/],
      [{ name: "x", duration: "ONCE", percentOff: "-5" }, /^percentOff/],
      [{ name: "x", duration: "ONCE", percentOff: "10", currency: "USD" }, /^currency: only with amountOff/],
      [{ name: "x", duration: "ONCE", amountOff: "5" }, /^currency: is required with amountOff/],
      [{ name: "x", duration: "ONCE", amountOff: "0", currency: "USD" }, /^amountOff: must be greater than 0/],
      [{ name: "x", duration: "REPEATING", percentOff: "10" }, /^durationInPeriods: is required when duration is REPEATING/],
      [{ name: "x", duration: "REPEATING", percentOff: "10", durationInPeriods: 121 }, /^durationInPeriods/],
      [{ name: "x", duration: "REPEATING", percentOff: "10", durationInPeriods: 0 }, /^durationInPeriods/],
      [{ name: "x", duration: "FOREVER", percentOff: "10", durationInPeriods: 2 }, /^durationInPeriods: only with duration REPEATING/],
      [{ name: "x", duration: "SOMETIMES", percentOff: "10" }, /^duration/],
      [{ name: "x", duration: "ONCE", percentOff: "10", maxRedemptions: 0 }, /^maxRedemptions/],
      [{ name: "x", duration: "ONCE", percentOff: "10", redeemBy: "2001-01-01T00:00:00Z" }, /^redeemBy: must be in the future/],
      [{ name: "x", duration: "ONCE", percentOff: "10", appliesToPlanIds: ["nope"] }, /^appliesToPlanIds/],
      [{ name: "", duration: "ONCE", percentOff: "10" }, /^name/],
      [{ name: "x", duration: "ONCE", percentOff: "10", bogus: 1 }, /bogus/],
    ];
    for (const [body, message] of cases) {
      const res = await api.post("/api/v1/coupons", body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error).to.equal("INVALID_REQUEST");
      expect(res.body.message, JSON.stringify(body)).to.match(message);
    }
    expect((await api.post("/api/v1/coupons", { name: "ok", duration: "ONCE", percentOff: "10", redeemBy: future })).status).to.equal(201);
  });

  it("promotion codes: create, read, list; unique per merchant whatever the case (409 PROMOTION_CODE_EXISTS); pattern; unknown coupon 404", async () => {
    const c = await coupon({});
    const created = await api.post("/api/v1/promotion-codes", { couponId: c.id, code: "Spring-2027", maxRedemptions: 3 });
    expect(created.status).to.equal(201);
    expect(created.body).to.include({
      object: "promotion_code",
      couponId: c.id,
      code: "Spring-2027",
      maxRedemptions: 3,
      timesRedeemed: 0,
      active: true,
      expiresAt: null,
    });
    expect((await api.get(`/api/v1/promotion-codes/${created.body.id}`)).body).to.deep.equal(created.body);
    expect((await api.get(`/api/v1/promotion-codes?couponId=${c.id}`)).body.data.map((p: any) => p.id)).to.deep.equal([created.body.id]);
    const dup = await api.post("/api/v1/promotion-codes", { couponId: c.id, code: "SPRING-2027" });
    expect(dup.status).to.equal(409);
    expect(dup.body.error).to.equal("PROMOTION_CODE_EXISTS");
    // Another merchant may have the same code; it cannot see this one nor use this coupon.
    const theirs = (await other.post("/api/v1/coupons", { name: "Theirs", duration: "ONCE", percentOff: "5" })).body;
    expect((await other.post("/api/v1/promotion-codes", { couponId: theirs.id, code: "spring-2027" })).status).to.equal(201);
    expect((await other.get(`/api/v1/promotion-codes/${created.body.id}`)).body.error).to.equal("PROMOTION_CODE_NOT_FOUND");
    expect((await other.post("/api/v1/promotion-codes", { couponId: c.id, code: "MINE" })).body.error).to.equal("COUPON_NOT_FOUND");
    for (const code of ["ab", "x".repeat(51), "SPRING 27", "ÄPFEL"]) {
      const res = await api.post("/api/v1/promotion-codes", { couponId: c.id, code });
      expect(res.status, code).to.equal(400);
      expect(res.body.message).to.match(/^code/);
    }
    // Parallel creates of one code in two cases: one 201, one 409.
    const both = await Promise.all(["RACE-1", "race-1"].map((code) => api.post("/api/v1/promotion-codes", { couponId: c.id, code })));
    expect(both.map((r) => r.status).sort()).to.deep.equal([201, 409]);
  });

  it("applies at create by couponId or by a promotion code in mixed case; refusals name their reason", async () => {
    const plan = await createPlan(api, { amount: "20", currency: "USD" });
    const eurPlan = await createPlan(api, { amount: "20", currency: "EUR" });
    const c = await coupon({ duration: "REPEATING", durationInPeriods: 3 });
    await api.post("/api/v1/promotion-codes", { couponId: c.id, code: "WELCOME-10" });

    const byCoupon = await api.post("/api/v1/subscriptions", subscriptionBody(plan.id, user.id, { couponId: c.id }));
    expect(byCoupon.status).to.equal(201);
    const sub = (await api.get(`/api/v1/subscriptions/${byCoupon.body.subscriptionId}`)).body;
    expect(sub.discount).to.include({ couponId: c.id, promotionCode: null, periodsRemaining: 3 });
    expect(sub.discount.start).to.be.a("string");
    const types = (await eventsOf(sys, sub.id)).map((e) => e.type);
    expect(types).to.deep.equal(["subscription.created", "subscription.discount_applied"]);

    const byCode = await api.post("/api/v1/subscriptions", subscriptionBody(plan.id, user.id, { promotionCode: "welcome-10" }));
    expect(byCode.status).to.equal(201);
    expect((await api.get(`/api/v1/subscriptions/${byCode.body.subscriptionId}`)).body.discount).to.include({ couponId: c.id, promotionCode: "WELCOME-10" });
    expect((await api.get(`/api/v1/coupons/${c.id}`)).body.timesRedeemed).to.equal(2);

    const refusal = async (body: Record<string, unknown>, planId = plan.id) =>
      (await api.post("/api/v1/subscriptions", subscriptionBody(planId, user.id, body))).body;
    expect(await refusal({ couponId: c.id, promotionCode: "WELCOME-10" })).to.include({
      error: "INVALID_REQUEST",
      message: "couponId: send couponId or promotionCode, not both",
    });
    expect((await refusal({ couponId: "00000000-0000-4000-8000-000000000000" })).error).to.equal("COUPON_NOT_FOUND");
    expect((await refusal({ promotionCode: "NOPE-NOPE" })).error).to.equal("PROMOTION_CODE_NOT_FOUND");
    const theirs = (await other.post("/api/v1/coupons", { name: "Theirs", duration: "ONCE", percentOff: "5" })).body;
    expect((await refusal({ couponId: theirs.id })).error).to.equal("COUPON_NOT_FOUND");

    const onlyOther = await coupon({ appliesToPlanIds: [eurPlan.id] });
    expect(await refusal({ couponId: onlyOther.id })).to.include({ error: "COUPON_NOT_APPLICABLE", message: "couponId: the coupon is not for this plan" });
    const fiveUsd = await coupon({ percentOff: undefined, amountOff: "5", currency: "USD" });
    expect((await refusal({ couponId: fiveUsd.id }, eurPlan.id)).message).to.match(/currency differs/);
    const deleted = await coupon({});
    await api.delete(`/api/v1/coupons/${deleted.id}`);
    expect((await refusal({ couponId: deleted.id })).message).to.match(/deleted/);
    const once = await coupon({ maxRedemptions: 1 });
    expect((await api.post("/api/v1/subscriptions", subscriptionBody(plan.id, user.id, { couponId: once.id }))).status).to.equal(201);
    expect(await refusal({ couponId: once.id })).to.include({
      error: "COUPON_NOT_APPLICABLE",
      message: "couponId: the coupon is used up (maxRedemptions reached)",
    });
    const inactive = await api.post("/api/v1/promotion-codes", { couponId: c.id, code: "SLEEPING", active: false });
    expect(inactive.status).to.equal(201);
    expect((await refusal({ promotionCode: "sleeping" })).message).to.match(/not active/);
    // A refusal creates nothing: no subscription, no redemption.
    expect((await api.get(`/api/v1/coupons/${c.id}`)).body.timesRedeemed).to.equal(2);
  });

  it("maxRedemptions 5 under 20 parallel creates: exactly 5 redeemed", async () => {
    const plan = await createPlan(api, { amount: "20", currency: "USD" });
    const c = await coupon({ maxRedemptions: 5 });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api.post("/api/v1/subscriptions", subscriptionBody(plan.id, user.id, { couponId: c.id }))),
    );
    expect(results.filter((r) => r.status === 201)).to.have.length(5);
    expect(results.filter((r) => r.status === 409).every((r) => r.body.error === "COUPON_NOT_APPLICABLE")).to.equal(true);
    expect(results.filter((r) => r.status === 409)).to.have.length(15);
    expect((await api.get(`/api/v1/coupons/${c.id}`)).body.timesRedeemed).to.equal(5);
    const [row] = await sys.sql<{ n: number }>("select count(*)::int as n from subscriptions where discount_coupon_id = ?", [c.id]);
    expect(row!.n).to.equal(5);
    // A promotion code's own limit holds the same way.
    const big = await coupon({});
    await api.post("/api/v1/promotion-codes", { couponId: big.id, code: "FIRST-FIVE", maxRedemptions: 5 });
    const viaCode = await Promise.all(
      Array.from({ length: 20 }, () => api.post("/api/v1/subscriptions", subscriptionBody(plan.id, user.id, { promotionCode: "first-five" }))),
    );
    expect(viaCode.filter((r) => r.status === 201)).to.have.length(5);
    expect((await api.get(`/api/v1/coupons/${big.id}`)).body.timesRedeemed).to.equal(5);
  });

  it("POST/DELETE …/discount replace and end a live subscription's discount, with their events; 404s and 400s", async () => {
    const plan = await createPlan(api, { amount: "20", currency: "USD" });
    const created = await api.post("/api/v1/subscriptions", subscriptionBody(plan.id, user.id));
    const id = created.body.subscriptionId;
    const first = await coupon({ duration: "FOREVER" });
    const second = await coupon({ duration: "ONCE", percentOff: "50" });
    const applied = await api.post(`/api/v1/subscriptions/${id}/discount`, { couponId: first.id });
    expect(applied.status).to.equal(200);
    expect(applied.body.discount).to.include({ couponId: first.id, periodsRemaining: null });
    const replaced = await api.post(`/api/v1/subscriptions/${id}/discount`, { couponId: second.id });
    expect(replaced.body.discount).to.include({ couponId: second.id, periodsRemaining: 1 });
    const ended = await api.delete(`/api/v1/subscriptions/${id}/discount`);
    expect(ended.status).to.equal(200);
    expect(ended.body.discount).to.equal(null);
    expect((await api.delete(`/api/v1/subscriptions/${id}/discount`)).status).to.equal(200);
    const events = (await eventsOf(sys, id)).map((e) => [e.type, e.data.reason ?? null]);
    expect(events).to.deep.equal([
      ["subscription.created", null],
      ["subscription.discount_applied", null],
      ["subscription.discount_ended", "REPLACED"],
      ["subscription.discount_applied", null],
      ["subscription.discount_ended", "REMOVED"],
    ]);
    expect((await api.post(`/api/v1/subscriptions/${id}/discount`, {})).body.message).to.equal("couponId: one of couponId or promotionCode is required");
    expect((await api.post(`/api/v1/subscriptions/${id}/discount`, { couponId: first.id, promotionCode: "X-Y-Z" })).status).to.equal(400);
    expect((await other.post(`/api/v1/subscriptions/${id}/discount`, { couponId: first.id })).body.error).to.equal("SUBSCRIPTION_NOT_FOUND");
    expect((await other.delete(`/api/v1/subscriptions/${id}/discount`)).body.error).to.equal("SUBSCRIPTION_NOT_FOUND");
    await api.post(`/api/v1/subscriptions/${id}/cancel`);
    expect((await api.post(`/api/v1/subscriptions/${id}/discount`, { couponId: first.id })).body.error).to.equal("SUBSCRIPTION_NOT_CHANGEABLE");
    void client;
  });
});

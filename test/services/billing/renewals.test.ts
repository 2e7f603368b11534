import { expect } from "chai";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { balances, createWalletUser, eventsOf, subscriptionsRpc } from "../../support/subscriptions.ts";
import { settle } from "../../support/sweeps.ts";
import {
  advanceBy,
  advanceTo,
  approvedSubscription,
  chargesOf,
  DAY,
  serviceNow,
  subscriptionOf,
  waitForCharges,
  waitForQuiet,
  waitForStatus,
} from "../../support/billing.ts";

const utcAt = (year: number, month: number, day: number, timeOfDayMs: number) => {
  const daysInMonth = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(Date.UTC(year, month, Math.min(day, daysInMonth)) + timeOfDayMs);
};

/** Renewals through the real engine: sweep (renewals group) → job → use case → wallet, driven by the sandbox clock. */
describe("recurring billing: renewals", () => {
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;

  const sys = useTestSystem();
  before(async () => {
    api = (await sys.createMerchant("Renewals")).api;
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
  });
  after(async () => {
    rpc?.close();
  });

  it("a year of a monthly plan anchored on 31 January: exactly 12 charges, at the anchor's day or the month's last", async function () {
    this.timeout(120_000);
    // Move the clock to the next 31 January, noon UTC.
    const now = await serviceNow(sys);
    let year = now.getUTCFullYear();
    if (Date.UTC(year, 0, 31, 12) <= now.getTime() + 60_000) year += 1;
    await advanceTo(sys, new Date(Date.UTC(year, 0, 31, 12)));

    const { subscriptionId, user } = await approvedSubscription(sys, api, client, {
      plan: { amount: "9.99", interval: "MONTH" },
      credits: { USDT_TRON: "200" },
    });
    const [first] = await chargesOf(sys, subscriptionId);
    const anchor = first!.period_start;
    expect(anchor.getUTCDate()).to.equal(31);
    const timeOfDay = anchor.getTime() - Date.UTC(year, 0, 31);

    // Just before the 13th billing date (31 January next year): periods 0 … 11.
    await advanceTo(sys, new Date(utcAt(year + 1, 0, 31, timeOfDay).getTime() - 3_600_000));
    // Twelve charges one after another; on a loaded machine one may outlive its RPC deadline, and the stale-charge
    // sweep finishes it once its lease (30 s) is over: the bound covers that recovery, not only the happy path.
    await waitForCharges(sys, subscriptionId, 12, 60_000);
    await waitForQuiet(sys);

    const charges = await chargesOf(sys, subscriptionId);
    expect(charges).to.have.length(12);
    charges.forEach((c, k) => {
      expect(c).to.include({ period_index: k, attempt: 1, status: "SUCCEEDED" });
      expect(c.period_start.toISOString(), `period ${k} start`).to.equal(utcAt(year, k, 31, timeOfDay).toISOString());
      expect(c.period_end.toISOString(), `period ${k} end`).to.equal(utcAt(year, k + 1, 31, timeOfDay).toISOString());
    });
    // 28 or 29 February, then back to 31 March: the anchor day is kept, not drifted.
    expect(charges[1]!.period_start.getUTCDate()).to.equal(new Date(Date.UTC(year, 2, 0)).getUTCDate());
    expect(charges[2]!.period_start.getUTCDate()).to.equal(31);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("80.12"); // 200 − 12 × 9.99

    const sub = await subscriptionOf(api, subscriptionId);
    expect(sub).to.include({
      status: "ACTIVE",
      currentPeriodStart: utcAt(year, 11, 31, timeOfDay).toISOString(),
      nextBillingAt: utcAt(year + 1, 0, 31, timeOfDay).toISOString(),
    });
    expect(sub.billingAnchor).to.equal(anchor.toISOString());

    const types = (await eventsOf(sys, subscriptionId)).map((e) => e.type).filter((t) => t !== "subscription.charge_upcoming");
    expect(types.slice(0, 3)).to.deep.equal(["subscription.created", "subscription.charge_succeeded", "subscription.activated"]);
    expect(types.slice(3)).to.deep.equal(Array.from({ length: 11 }, () => ["subscription.charge_succeeded", "subscription.renewed"]).flat());

    const check = await sys.admin.get("/admin/v1/ledger/check");
    expect(check.body.ok, JSON.stringify(check.body)).to.equal(true);
  });

  it("a trial ends with the first charge: TRIALING → ACTIVE, the paid period starts at the trial's end", async () => {
    const { subscriptionId, user } = await approvedSubscription(sys, api, client, {
      plan: { amount: "5", interval: "WEEK", trialDays: 7 },
      credits: { USDT_TRON: "12" },
    });
    const trialing = await subscriptionOf(api, subscriptionId);
    expect(trialing.status).to.equal("TRIALING");
    expect(await chargesOf(sys, subscriptionId)).to.deep.equal([]);

    await advanceTo(sys, new Date(Date.parse(trialing.trialEnd) + 60_000));
    const active = await waitForStatus(api, subscriptionId, "ACTIVE");
    expect(active).to.include({ currentPeriodStart: trialing.trialEnd, billingAnchor: trialing.trialEnd });
    expect(Date.parse(active.currentPeriodEnd) - Date.parse(trialing.trialEnd)).to.equal(7 * DAY * 1000);
    expect(active.nextBillingAt).to.equal(active.currentPeriodEnd);
    const charges = await chargesOf(sys, subscriptionId);
    expect(charges.map((c) => [c.period_index, c.status])).to.deep.equal([[0, "SUCCEEDED"]]);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("7");
    const types = (await eventsOf(sys, subscriptionId)).map((e) => e.type);
    expect(types).to.deep.equal(["subscription.created", "subscription.trialing", "subscription.charge_succeeded", "subscription.activated"]);
  });

  it("a trial whose first charge fails goes PAST_DUE", async () => {
    const { subscriptionId } = await approvedSubscription(sys, api, client, { plan: { amount: "50", trialDays: 3 }, credits: { USDT_TRON: "1" } });
    const trialing = await subscriptionOf(api, subscriptionId);
    await advanceTo(sys, new Date(Date.parse(trialing.trialEnd) + 60_000));
    const pastDue = await waitForStatus(api, subscriptionId, "PAST_DUE");
    expect(pastDue.nextRetryAt).to.equal(new Date(Date.parse(pastDue.pastDueSince) + DAY * 1000).toISOString());
    expect((await chargesOf(sys, subscriptionId)).map((c) => [c.period_index, c.status, c.failure_reason])).to.deep.equal([
      [0, "FAILED", "INSUFFICIENT_FUNDS"],
    ]);
  });

  it("a charge above maximumChargeAmount fails with MAXIMUM_CHARGE_EXCEEDED without calling the wallet", async () => {
    const { subscriptionId, plan, user } = await approvedSubscription(sys, api, client, {
      plan: { amount: "10", maximumChargeAmount: "12", interval: "DAY" },
      credits: { USDT_TRON: "100" },
    });
    // Plans cannot be created like this (400); a cap below the amount stands for any charge the cap must stop.
    // Prices are immutable (a trigger refuses the update): lift it for this one arranged row of this test's own database.
    await sys.sql("alter table plans disable trigger plans_price_is_immutable");
    await sys.sql("update plans set maximum_charge_amount = 9 where id = ?", [plan.id]);
    await sys.sql("alter table plans enable trigger plans_price_is_immutable");
    await advanceBy(sys, DAY + 60);
    const sub = await waitForStatus(api, subscriptionId, "PAST_DUE");
    expect(sub.nextRetryAt).to.be.a("string");
    const charges = await chargesOf(sys, subscriptionId);
    expect(charges.map((c) => [c.period_index, c.status, c.failure_reason])).to.deep.equal([
      [0, "SUCCEEDED", null],
      [1, "FAILED", "MAXIMUM_CHARGE_EXCEEDED"],
    ]);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("90");
    const wallet = await sys.sql("select count(*)::int as n from wallet_charge_attempts where idempotency_key = ?", [`subscription-charge-${charges[1]!.id}`]);
    expect(wallet[0].n).to.equal(0);
    const types = (await eventsOf(sys, subscriptionId)).map((e) => e.type);
    expect(types.slice(-2)).to.deep.equal(["subscription.charge_failed", "subscription.past_due"]);
  });

  it("pause stops charging; resume keeps the anchor and skips the periods missed while paused", async () => {
    const { subscriptionId, user } = await approvedSubscription(sys, api, client, { plan: { amount: "3", interval: "WEEK" }, credits: { USDT_TRON: "30" } });
    const active = await subscriptionOf(api, subscriptionId);
    const anchor = Date.parse(active.billingAnchor);
    const week = 7 * DAY * 1000;
    expect((await api.post(`/api/v1/subscriptions/${subscriptionId}/pause`)).body.status).to.equal("PAUSED");

    await advanceTo(sys, new Date(anchor + 2.5 * week)); // billing dates at weeks 1 and 2 pass while paused
    await settle(sys); // every sweep has run on the new time, and every job it queued
    expect(await chargesOf(sys, subscriptionId)).to.have.length(1);

    const resumed = (await api.post(`/api/v1/subscriptions/${subscriptionId}/resume`)).body;
    expect(resumed).to.include({
      status: "ACTIVE",
      billingAnchor: active.billingAnchor,
      currentPeriodStart: new Date(anchor + 2 * week).toISOString(),
      currentPeriodEnd: new Date(anchor + 3 * week).toISOString(),
      nextBillingAt: new Date(anchor + 3 * week).toISOString(),
    });
    await settle(sys);
    expect(await chargesOf(sys, subscriptionId)).to.have.length(1);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("27");

    await advanceTo(sys, new Date(anchor + 3 * week + 60_000));
    const charges = await waitForCharges(sys, subscriptionId, 2);
    expect(charges[1]).to.include({ period_index: 3, status: "SUCCEEDED" });
    expect(charges[1]!.period_start.toISOString()).to.equal(new Date(anchor + 3 * week).toISOString());
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("24");
  });

  it("pause is refused while PAST_DUE (409); cancel works", async () => {
    const { subscriptionId } = await approvedSubscription(sys, api, client, { plan: { amount: "8", interval: "DAY" }, credits: { USDT_TRON: "8" } });
    await advanceBy(sys, DAY + 60);
    await waitForStatus(api, subscriptionId, "PAST_DUE");
    const paused = await api.post(`/api/v1/subscriptions/${subscriptionId}/pause`);
    expect(paused.status).to.equal(409);
    expect(paused.body).to.deep.equal({ error: "INVALID_STATUS_TRANSITION", message: "cannot pause a subscription in status PAST_DUE" });
    const cancelled = await api.post(`/api/v1/subscriptions/${subscriptionId}/cancel`);
    expect(cancelled.body).to.include({ status: "CANCELLED", nextRetryAt: null, nextBillingAt: null });
  });

  it("subscription.charge_upcoming is recorded once per period, CHARGE_NOTICE_DAYS before, with the amount and whether the balance covers it", async () => {
    const { subscriptionId } = await approvedSubscription(sys, api, client, {
      plan: { amount: "20", currency: "EUR", interval: "MONTH" },
      credits: { USDT_TRON: "30" },
    });
    const sub = await subscriptionOf(api, subscriptionId);
    const notices = async () => (await eventsOf(sys, subscriptionId)).filter((e) => e.type === "subscription.charge_upcoming");
    await advanceTo(sys, new Date(Date.parse(sub.nextBillingAt) - 4 * DAY * 1000));
    await settle(sys);
    expect(await notices()).to.have.length(0);
    await advanceTo(sys, new Date(Date.parse(sub.nextBillingAt) - 3 * DAY * 1000 + 60_000));
    await settle(sys);
    await settle(sys); // the sweep finds the period again: still one notice
    const [notice, ...more] = await notices();
    expect(notice, "the notice").to.not.equal(undefined);
    expect(more).to.have.length(0);
    // 20 EUR = 21.6 USDT at the sandbox rate; the balance after the first payment is 8.4.
    expect(notice!.data).to.deep.equal({
      object: "upcoming_charge",
      subscriptionId,
      // created 1, activated 2; the notice itself is no change
      subscriptionVersion: 2,
      periodIndex: 1,
      date: sub.nextBillingAt,
      amount: "20",
      subtotal: "20",
      discountAmount: "0",
      creditApplied: "0",
      currency: "EUR",
      asset: "USDT_TRON",
      assetAmount: "21.6",
      rate: "1.08",
      balanceCovers: false,
    });
  });

  it("GET /api/v1/subscriptions/{id}/charges: every attempt, newest first, paginated; another merchant's is 404", async () => {
    const { subscriptionId, user } = await approvedSubscription(sys, api, client, { plan: { amount: "4", interval: "DAY" }, credits: { USDT_TRON: "4" } });
    await advanceBy(sys, DAY + 60);
    await waitForStatus(api, subscriptionId, "PAST_DUE");
    const all = await api.get(`/api/v1/subscriptions/${subscriptionId}/charges`);
    expect(all.status).to.equal(200);
    expect(all.body.hasMore).to.equal(false);
    expect(all.body.data.map((c: any) => [c.periodIndex, c.status, c.failureReason, c.attempt])).to.deep.equal([
      [1, "FAILED", "INSUFFICIENT_FUNDS", 1],
      [0, "SUCCEEDED", null, 1],
    ]);
    const paid = all.body.data[1];
    expect(paid).to.include({ object: "subscription_charge", subscriptionId, amount: "4", currency: "USD", asset: "USDT_TRON", assetAmount: "4", rate: "1" });
    expect(paid.walletTransactionId).to.be.a("string");
    expect(Object.keys(paid).sort()).to.deep.equal(
      [
        "id",
        "object",
        "subscriptionId",
        "periodIndex",
        "periodStart",
        "periodEnd",
        "amount",
        "currency",
        "asset",
        "assetAmount",
        "rate",
        "status",
        "failureReason",
        "attempt",
        "walletTransactionId",
        "createdAt",
        "amountRefunded",
        "assetAmountRefunded",
        "fundedByFallback",
        "subtotal",
        "discountAmount",
        "creditApplied",
        "couponId",
        "rateAt",
        "receiptNumber",
        "receiptUrl",
      ].sort(),
    );
    // The REST record is the event's charge record.
    const succeeded = (await eventsOf(sys, subscriptionId)).find((e) => e.type === "subscription.charge_succeeded");
    expect(succeeded!.data.charge).to.deep.equal(paid);

    const page1 = await api.get(`/api/v1/subscriptions/${subscriptionId}/charges?limit=1`);
    expect(page1.body.hasMore).to.equal(true);
    const page2 = await api.get(`/api/v1/subscriptions/${subscriptionId}/charges?limit=1&cursor=${page1.body.nextCursor}`);
    expect([...page1.body.data, ...page2.body.data].map((c: any) => c.id)).to.deep.equal(all.body.data.map((c: any) => c.id));
    expect(page2.body.hasMore).to.equal(false);
    const failed = await api.get(`/api/v1/subscriptions/${subscriptionId}/charges?status=FAILED`);
    expect(failed.body.data).to.have.length(1);

    expect((await api.get(`/api/v1/subscriptions/${subscriptionId}/charges?status=LOST`)).status).to.equal(400);
    const other = await sys.createMerchant("Other");
    const foreign = await other.api.get(`/api/v1/subscriptions/${subscriptionId}/charges`);
    expect(foreign.status).to.equal(404);
    expect(foreign.body.error).to.equal("SUBSCRIPTION_NOT_FOUND");
    expect((await api.get(`/api/v1/subscriptions/8c0f1f2e-0000-4000-8000-000000000000/charges`)).status).to.equal(404);
    expect(user.id).to.be.a("string");
  });

  it("a renewal converts the plan currency at the current rate (rounded up) and records it", async () => {
    const user = await createWalletUser(sys, { BTC: "1" });
    const { subscriptionId } = await approvedSubscription(sys, api, client, { plan: { amount: "100", currency: "EUR", interval: "DAY" }, user, asset: "BTC" });
    await advanceBy(sys, DAY + 60);
    await waitForCharges(sys, subscriptionId, 2);
    const page = await api.get(`/api/v1/subscriptions/${subscriptionId}/charges`);
    expect(page.body.data[0]).to.include({ periodIndex: 1, status: "SUCCEEDED", amount: "100", currency: "EUR", asset: "BTC", assetAmount: "0.0018" });
  });
});

import { expect } from "chai";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { createWalletUser, credit, eventsOf, subscriptionsRpc } from "../../support/subscriptions.ts";
import { advanceTo, approvedSubscription, chargesOf, DAY, portsFor, serviceNow, subscriptionOf, waitForCharges, waitForStatus } from "../../support/billing.ts";
import { drainQueues, settle } from "../../support/sweeps.ts";
import { renewSubscription } from "../../../services/subscriptions/renewals/renew-subscription.ts";

const DAY_MS = DAY * 1000;
const patch = (api: ApiClient, body: unknown) => api.request("PATCH", "/api/v1/settings/billing", { body });

/** Issue 26: dunning settings per merchant, one attempt budget per period, the funding fallback, at-risk warnings. */
describe("dunning settings, attempt budget, funding fallback, at-risk", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;

  const sys = useTestSystem();
  before(async () => {
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
  });
  after(async () => {
    rpc?.close();
  });

  /** An ACTIVE monthly subscription funded with exactly its first payment, moved to its first renewal, which fails. */
  async function pastDue(api: ApiClient, amount = "10") {
    const arranged = await approvedSubscription(sys, api, client, { plan: { amount, interval: "MONTH" }, credits: { USDT_TRON: amount } });
    const active = await subscriptionOf(api, arranged.subscriptionId);
    await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
    const sub = await waitForStatus(api, arranged.subscriptionId, "PAST_DUE");
    return { ...arranged, active, sub, since: Date.parse(sub.pastDueSince) };
  }

  describe("GET/PATCH /api/v1/settings/billing", () => {
    it("answers the deployment's defaults, changes only what is sent, records billing_settings.updated; another merchant's stay its own", async () => {
      const a = await sys.createMerchant("Settings A");
      const b = await sys.createMerchant("Settings B");
      const defaults = {
        object: "billing_settings",
        dunningRetryDays: [1, 3, 5],
        dunningFinalStatus: "UNPAID",
        chargeNoticeDays: 3,
        retryOnTopUp: true,
        customerEmails: { upcomingCharge: true, paymentFailed: true, receipt: true },
      };
      expect((await a.api.get("/api/v1/settings/billing")).body).to.deep.equal(defaults);

      const changed = await patch(a.api, { dunningRetryDays: [2, 4], customerEmails: { receipt: false } });
      expect(changed.status).to.equal(200);
      expect(changed.body).to.deep.equal({
        ...defaults,
        dunningRetryDays: [2, 4],
        customerEmails: { upcomingCharge: true, paymentFailed: true, receipt: false },
      });
      const again = await patch(a.api, { dunningFinalStatus: "CANCELLED", chargeNoticeDays: 0, retryOnTopUp: false });
      expect(again.body).to.deep.equal({
        ...defaults,
        dunningRetryDays: [2, 4],
        dunningFinalStatus: "CANCELLED",
        chargeNoticeDays: 0,
        retryOnTopUp: false,
        customerEmails: { upcomingCharge: true, paymentFailed: true, receipt: false },
      });
      expect((await a.api.get("/api/v1/settings/billing")).body).to.deep.equal(again.body);
      expect((await b.api.get("/api/v1/settings/billing")).body).to.deep.equal(defaults);

      const events = await sys.sql<{ merchant_id: string; data: any }>(
        "select merchant_id, data from events where type = 'billing_settings.updated' order by seq",
      );
      expect(events.map((e) => e.merchant_id)).to.deep.equal([a.id, a.id]);
      expect(events[1]!.data).to.deep.equal(again.body);
    });

    it("every bad value is a 400 naming its field, and changes nothing", async () => {
      const { api } = await sys.createMerchant("Settings 400");
      const cases: [unknown, string][] = [
        [{}, ""],
        [{ dunningRetryDays: [] }, "dunningRetryDays"],
        [{ dunningRetryDays: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] }, "dunningRetryDays"],
        [{ dunningRetryDays: [0] }, "dunningRetryDays"],
        [{ dunningRetryDays: [366] }, "dunningRetryDays"],
        [{ dunningRetryDays: [1.5] }, "dunningRetryDays"],
        [{ dunningRetryDays: [3, 1] }, "dunningRetryDays"],
        [{ dunningRetryDays: [2, 2] }, "dunningRetryDays"],
        [{ dunningRetryDays: "1,3,5" }, "dunningRetryDays"],
        [{ dunningFinalStatus: "PAUSED" }, "dunningFinalStatus"],
        [{ chargeNoticeDays: -1 }, "chargeNoticeDays"],
        [{ chargeNoticeDays: 366 }, "chargeNoticeDays"],
        [{ chargeNoticeDays: "3" }, "chargeNoticeDays"],
        [{ retryOnTopUp: "yes" }, "retryOnTopUp"],
        [{ customerEmails: { receipt: "no" } }, "customerEmails"],
        [{ customerEmails: { newsletter: true } }, "customerEmails"],
        [{ object: "billing_settings" }, "object"],
      ];
      for (const [body, field] of cases) {
        const res = await patch(api, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error, JSON.stringify(body)).to.equal("INVALID_REQUEST");
        expect(res.body.message, JSON.stringify(body)).to.include(field);
      }
      expect((await api.get("/api/v1/settings/billing")).body.dunningRetryDays).to.deep.equal([1, 3, 5]);
    });

    it("over gRPC the same rules apply (strictly increasing days: INVALID_ARGUMENT naming the field)", async () => {
      const { id } = await sys.createMerchant("Settings gRPC");
      const err = await client.updateBillingSettings({ merchantId: id, dunningRetryDays: { days: [3, 1] } }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ConnectError);
      expect((err as ConnectError).code).to.equal(Code.InvalidArgument);
      expect((err as ConnectError).rawMessage).to.match(/^dunningRetryDays: /);
      const res = await client.updateBillingSettings({ merchantId: id, chargeNoticeDays: 7 });
      expect(res.settings!.chargeNoticeDays).to.equal(7);
      expect(JSON.parse(res.settings!.recordJson)).to.include({ object: "billing_settings", chargeNoticeDays: 7 });
    });
  });

  describe("per-merchant schedules", () => {
    it("two merchants side by side: each subscription retries on its merchant's days and ends in its merchant's final status", async () => {
      const a = await sys.createMerchant("Schedule A"); // defaults: 1,3,5 UNPAID
      const b = await sys.createMerchant("Schedule B");
      await patch(b.api, { dunningRetryDays: [2], dunningFinalStatus: "CANCELLED" });
      const subA = await approvedSubscription(sys, a.api, client, { plan: { amount: "10", interval: "MONTH" }, credits: { USDT_TRON: "10" } });
      const subB = await approvedSubscription(sys, b.api, client, { plan: { amount: "10", interval: "MONTH" }, credits: { USDT_TRON: "10" } });
      const due = Math.max(
        Date.parse((await subscriptionOf(a.api, subA.subscriptionId)).nextBillingAt),
        Date.parse((await subscriptionOf(b.api, subB.subscriptionId)).nextBillingAt),
      );
      await advanceTo(sys, new Date(due + 60_000));
      const pa = await waitForStatus(a.api, subA.subscriptionId, "PAST_DUE");
      const pb = await waitForStatus(b.api, subB.subscriptionId, "PAST_DUE");
      expect(Date.parse(pa.nextRetryAt) - Date.parse(pa.pastDueSince)).to.equal(1 * DAY_MS);
      expect(Date.parse(pb.nextRetryAt) - Date.parse(pb.pastDueSince)).to.equal(2 * DAY_MS);

      await advanceTo(sys, new Date(Date.parse(pb.nextRetryAt) + 1000));
      const cancelled = await waitForStatus(b.api, subB.subscriptionId, "CANCELLED");
      expect(cancelled.cancellationReason).to.equal("PAYMENT_FAILED");
      expect(await chargesOf(sys, subB.subscriptionId)).to.have.length(3); // period 0 + its 2 attempts (budget 1 + 1)
      await waitForCharges(sys, subA.subscriptionId, 3); // period 0 + first failure + the day-1 retry
      expect(await subscriptionOf(a.api, subA.subscriptionId)).to.include({
        status: "PAST_DUE",
        nextRetryAt: new Date(Date.parse(pa.pastDueSince) + 3 * DAY_MS).toISOString(),
      });
    });

    it("a change mid-dunning keeps the retry already scheduled, then the new schedule and budget decide", async () => {
      const m = await sys.createMerchant("Mid-dunning");
      const { subscriptionId, since } = await pastDue(m.api);
      // Scheduled under 1,3,5: day 1. Now one retry only (budget 2), final CANCELLED.
      await patch(m.api, { dunningRetryDays: [1], dunningFinalStatus: "CANCELLED" });
      expect((await subscriptionOf(m.api, subscriptionId)).nextRetryAt).to.equal(new Date(since + DAY_MS).toISOString());
      await advanceTo(sys, new Date(since + DAY_MS + 1000));
      const ended = await waitForStatus(m.api, subscriptionId, "CANCELLED");
      expect(ended.cancellationReason).to.equal("PAYMENT_FAILED");
      expect((await chargesOf(sys, subscriptionId)).filter((c) => c.period_index === 1).map((c) => c.attempt)).to.deep.equal([1, 2]);
    });

    it("a schedule shortened below the attempts already made ends dunning at the next retry without charging", async () => {
      const m = await sys.createMerchant("Shortened");
      const { subscriptionId, since } = await pastDue(m.api);
      await advanceTo(sys, new Date(since + DAY_MS + 1000));
      await waitForCharges(sys, subscriptionId, 3); // attempts 1 and 2 of period 1; next retry day 3
      await patch(m.api, { dunningRetryDays: [1] }); // budget 2: used up
      await advanceTo(sys, new Date(since + 3 * DAY_MS + 1000));
      await waitForStatus(m.api, subscriptionId, "UNPAID");
      expect(await chargesOf(sys, subscriptionId)).to.have.length(3);
    });
  });

  describe("one attempt budget per period", () => {
    it("early retries racing the scheduled one never exceed 1 + retry days, and nothing is charged after UNPAID", async () => {
      const m = await sys.createMerchant("Budget");
      await patch(m.api, { dunningRetryDays: [1] }); // budget 2
      const { subscriptionId, since, user } = await pastDue(m.api);
      const { ports, close } = portsFor(sys);
      try {
        // The wallet's top-up job and an asset change both run the same early retry; the sweep runs the scheduled one.
        await advanceTo(sys, new Date(since + DAY_MS + 1000));
        const early = Array.from({ length: 6 }, () =>
          renewSubscription({ em: sys.context().em.fork(), clock: sys.context().clock }, ports, { subscriptionId, retryNow: true }),
        );
        await Promise.allSettled(early);
        await waitForStatus(m.api, subscriptionId, "UNPAID");
        await settle(sys);
        // Money now, and more early retries: nothing more is charged.
        await credit(sys, user.id, "USDT_TRON", "100");
        await renewSubscription({ em: sys.context().em.fork(), clock: sys.context().clock }, ports, { subscriptionId, retryNow: true });
        await drainQueues(sys);
      } finally {
        close();
      }
      const period1 = (await chargesOf(sys, subscriptionId)).filter((c) => c.period_index === 1);
      expect(period1.map((c) => [c.attempt, c.status])).to.deep.equal([
        [1, "FAILED"],
        [2, "FAILED"],
      ]);
      expect((await subscriptionOf(m.api, subscriptionId)).status).to.equal("UNPAID");
    });

    it("an early retry that fails uses an attempt: the budget ends dunning at the scheduled retry after it", async () => {
      const m = await sys.createMerchant("Budget early");
      await patch(m.api, { dunningRetryDays: [1, 2] }); // budget 3
      const { subscriptionId, since } = await pastDue(m.api);
      const { ports, close } = portsFor(sys);
      try {
        await renewSubscription({ em: sys.context().em.fork(), clock: sys.context().clock }, ports, { subscriptionId, retryNow: true });
      } finally {
        close();
      }
      expect(await subscriptionOf(m.api, subscriptionId)).to.include({ status: "PAST_DUE", nextRetryAt: new Date(since + DAY_MS).toISOString() });
      await advanceTo(sys, new Date(since + DAY_MS + 1000));
      await waitForStatus(m.api, subscriptionId, "UNPAID"); // attempt 3 of 3, though the schedule had a day-2 retry
      expect((await chargesOf(sys, subscriptionId)).filter((c) => c.period_index === 1)).to.have.length(3);
    });
  });

  describe("funding fallback", () => {
    it("SetFundingFallback: stored in order, event once, validated, another customer's subscription is not found", async () => {
      const m = await sys.createMerchant("Fallback set");
      const user = await createWalletUser(sys, { USDT_TRON: "100", USDC_ETH: "1", BTC: "0.001" });
      const { subscriptionId } = await approvedSubscription(sys, m.api, client, { plan: { amount: "10", interval: "MONTH" }, user });
      const res = await client.setFundingFallback({ walletUserId: user.id, subscriptionId, assets: ["USDC_ETH", "BTC"] });
      expect(res.subscription!.fallbackAssets).to.deep.equal(["USDC_ETH", "BTC"]);
      expect((await subscriptionOf(m.api, subscriptionId)).fallbackAssets).to.deep.equal(["USDC_ETH", "BTC"]);
      await client.setFundingFallback({ walletUserId: user.id, subscriptionId, assets: ["USDC_ETH", "BTC"] }); // same: nothing recorded
      const events = (await eventsOf(sys, subscriptionId)).filter((e) => e.type === "subscription.funding_fallback_changed");
      expect(events).to.have.length(1);
      expect(events[0]!.data).to.include.keys("fallbackAssets", "previousFallbackAssets");
      expect(events[0]!.data.previousFallbackAssets).to.deep.equal([]);

      const refuse = async (assets: string[], code: Code, text: RegExp) => {
        const err = await client.setFundingFallback({ walletUserId: user.id, subscriptionId, assets }).catch((e: unknown) => e);
        expect(err, assets.join(",")).to.be.instanceOf(ConnectError);
        expect((err as ConnectError).code, assets.join(",")).to.equal(code);
        expect((err as ConnectError).rawMessage, assets.join(",")).to.match(text);
      };
      await refuse(["USDC_ETH", "BTC", "ETH"], Code.InvalidArgument, /^assets: at most 2/);
      await refuse(["BTC", "BTC"], Code.InvalidArgument, /^assets: .*distinct/);
      await refuse(["USDT_TRON"], Code.InvalidArgument, /funding asset/);
      await refuse(["DOGE"], Code.InvalidArgument, /^assets\[0\]: DOGE is not an account/); // not an asset of the wallet
      await refuse(["bad code"], Code.InvalidArgument, /^assets\[0\]: must be an asset code/);

      const stranger = await createWalletUser(sys, { USDC_ETH: "10" });
      const err = await client.setFundingFallback({ walletUserId: stranger.id, subscriptionId, assets: ["USDC_ETH"] }).catch((e: unknown) => e);
      expect((err as ConnectError).code).to.equal(Code.NotFound);
      expect((await subscriptionOf(m.api, subscriptionId)).fallbackAssets).to.deep.equal(["USDC_ETH", "BTC"]);
    });

    it("the approval takes fallback assets too", async () => {
      const m = await sys.createMerchant("Fallback approval");
      const user = await createWalletUser(sys, { USDT_TRON: "100", USDC_ETH: "5" });
      const plan = (await m.api.post("/api/v1/subscription-plans", { name: "P", amount: "10", currency: "USD", interval: "MONTH" })).body;
      const created = (
        await m.api.post("/api/v1/subscriptions", {
          planId: plan.id,
          walletUserId: user.id,
          externalReference: "x",
          successUrl: "https://example.com/s",
          cancelUrl: "https://example.com/c",
        })
      ).body;
      const token = new URL(created.authorizationUrl).pathname.split("/").pop()!;
      const res = await client.approveAuthorization({ token, walletUserId: user.id, fundingAsset: "USDT_TRON", fallbackAssets: ["USDC_ETH"] });
      expect(res.subscription!.fallbackAssets).to.deep.equal(["USDC_ETH"]);
      expect(res.subscription!.status).to.equal("ACTIVE");
    });

    it("a renewal the funding asset cannot pay is paid by the first fallback that covers it, in order; the funding asset stays", async () => {
      const m = await sys.createMerchant("Fallback order");
      const user = await createWalletUser(sys, { USDT_TRON: "10", USDC_ETH: "3", BTC: "1" });
      const { subscriptionId } = await approvedSubscription(sys, m.api, client, { plan: { amount: "10", interval: "MONTH" }, user });
      await client.setFundingFallback({ walletUserId: user.id, subscriptionId, assets: ["USDC_ETH", "BTC"] });
      const active = await subscriptionOf(m.api, subscriptionId);
      await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
      const charges = await waitForCharges(sys, subscriptionId, 2);
      const renewed = await waitForStatus(m.api, subscriptionId, "ACTIVE");
      expect(renewed.fundingAsset).to.equal("USDT_TRON");
      expect(renewed.currentPeriodStart).to.equal(active.nextBillingAt);
      const [row] = await sys.sql<{ asset: string; funded_by_fallback: boolean; status: string }>(
        "select asset, funded_by_fallback, status from subscription_charges where id = ?",
        [charges[1]!.id],
      );
      expect(row).to.deep.equal({ asset: "BTC", funded_by_fallback: true, status: "SUCCEEDED" });
      const succeeded = (await eventsOf(sys, subscriptionId)).filter((e) => e.type === "subscription.charge_succeeded").at(-1)!;
      expect(succeeded.data.charge).to.include({ asset: "BTC", fundedByFallback: true, attempt: 1 });
      const listed = (await m.api.get(`/api/v1/subscriptions/${subscriptionId}/charges`)).body.data[0];
      expect(listed).to.include({ asset: "BTC", fundedByFallback: true });
    });

    it("a fallback above the maximum per charge (at its own quote) is not used: the attempt fails with the funding asset's reason", async () => {
      const m = await sys.createMerchant("Fallback cap");
      const user = await createWalletUser(sys, { USDT_TRON: "10.01", BTC: "1" });
      const { subscriptionId } = await approvedSubscription(sys, m.api, client, {
        plan: { amount: "10.01", maximumChargeAmount: "10.01", interval: "MONTH" },
        user,
      });
      // The precondition: in BTC the price rounded up is more than the maximum rounded down (not an exact conversion).
      const { ports, close } = portsFor(sys);
      try {
        const up = await ports.wallet.quote({ amount: "10.01", currency: "USD", asset: "BTC", rounding: "up" });
        const down = await ports.wallet.quote({ amount: "10.01", currency: "USD", asset: "BTC", rounding: "down" });
        expect(up.assetAmount).to.not.equal(down.assetAmount);
      } finally {
        close();
      }
      await client.setFundingFallback({ walletUserId: user.id, subscriptionId, assets: ["BTC"] });
      const active = await subscriptionOf(m.api, subscriptionId);
      await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
      await waitForStatus(m.api, subscriptionId, "PAST_DUE");
      const last = (await chargesOf(sys, subscriptionId)).at(-1)!;
      expect(last).to.include({ status: "FAILED", failure_reason: "INSUFFICIENT_FUNDS" });
      const [row] = await sys.sql<{ asset: string; funded_by_fallback: boolean }>("select asset, funded_by_fallback from subscription_charges where id = ?", [
        last.id,
      ]);
      expect(row).to.deep.equal({ asset: "USDT_TRON", funded_by_fallback: false });
    });
  });

  describe("at-risk warnings", () => {
    it("recorded once per period at the notice, shown in ListCustomerSubscriptions, cleared by a covering top-up with no new event", async () => {
      const m = await sys.createMerchant("At risk");
      await patch(m.api, { chargeNoticeDays: 5 });
      const user = await createWalletUser(sys, { USDT_TRON: "10", USDC_ETH: "2" });
      const { subscriptionId } = await approvedSubscription(sys, m.api, client, { plan: { amount: "10", interval: "MONTH" }, user });
      await client.setFundingFallback({ walletUserId: user.id, subscriptionId, assets: ["USDC_ETH"] }); // short too
      const active = await subscriptionOf(m.api, subscriptionId);
      await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) - 4 * DAY_MS));
      await settle(sys);
      const atRisk = async () => (await eventsOf(sys, subscriptionId)).filter((e) => e.type === "subscription.charge_at_risk");
      const recorded = await atRisk();
      expect(recorded).to.have.length(1);
      expect(recorded[0]!.data).to.include({
        subscriptionId,
        periodIndex: 1,
        date: active.nextBillingAt,
        amount: "10",
        currency: "USD",
        asset: "USDT_TRON",
        assetAmount: "10",
        shortfall: "10",
      });
      const listed = async () =>
        (await client.listCustomerSubscriptions({ walletUserId: user.id })).subscriptions.find((s) => s.subscription!.id === subscriptionId)!;
      expect(await listed()).to.include({ atRisk: true, shortfall: "10" });

      // A top-up that does not cover it: still at risk, the shortfall follows, no second event.
      await credit(sys, user.id, "USDT_TRON", "4");
      await drainQueues(sys);
      expect(await listed()).to.include({ atRisk: true, shortfall: "6" });
      // One that covers it clears it, recording nothing.
      await credit(sys, user.id, "USDT_TRON", "6");
      await drainQueues(sys);
      expect((await listed()).atRisk).to.equal(false);
      expect(await atRisk()).to.have.length(1);
      // The charge then goes through.
      await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
      await waitForCharges(sys, subscriptionId, 2);
      expect((await waitForStatus(m.api, subscriptionId, "ACTIVE")).currentPeriodStart).to.equal(active.nextBillingAt);
      expect(await atRisk()).to.have.length(1);
    });

    it("nothing is recorded when a fallback covers the charge; a debit by another subscription's charge makes it at risk", async () => {
      const m = await sys.createMerchant("At risk debit");
      await patch(m.api, { chargeNoticeDays: 5 });
      const user = await createWalletUser(sys, { USDT_TRON: "20" });
      const first = await approvedSubscription(sys, m.api, client, { plan: { amount: "10", interval: "MONTH" }, user }); // 10 left
      const firstSub = await subscriptionOf(m.api, first.subscriptionId);
      // The second one bills 2 days after the first: its notice comes first while the balance covers it.
      await advanceTo(sys, new Date((await serviceNow(sys)).getTime() + 2 * DAY_MS));
      const second = await approvedSubscription(sys, m.api, client, { plan: { amount: "5", interval: "MONTH" }, user, credits: {} }); // 5 left
      const secondSub = await subscriptionOf(m.api, second.subscriptionId);
      await credit(sys, user.id, "USDT_TRON", "5"); // 10: covers the first's renewal; the second's only if the first is not charged
      await advanceTo(sys, new Date(Date.parse(firstSub.nextBillingAt) - 60_000));
      await settle(sys);
      const atRisk = async (id: string) => (await eventsOf(sys, id)).filter((e) => e.type === "subscription.charge_at_risk");
      expect(await atRisk(second.subscriptionId)).to.have.length(0);
      expect(await atRisk(first.subscriptionId)).to.have.length(0);
      // The first renews: 0 left, the second's announced charge is now at risk (a debit, not a notice).
      await advanceTo(sys, new Date(Date.parse(firstSub.nextBillingAt) + 60_000));
      await waitForCharges(sys, first.subscriptionId, 2);
      await drainQueues(sys);
      expect(Date.parse(secondSub.nextBillingAt)).to.be.greaterThan((await serviceNow(sys)).getTime());
      const recorded = await atRisk(second.subscriptionId);
      expect(recorded).to.have.length(1);
      expect(recorded[0]!.data).to.include({ shortfall: "5", asset: "USDT_TRON" });
    });
  });
});

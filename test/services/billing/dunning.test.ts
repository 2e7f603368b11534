import { expect } from "chai";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { creditWalletUser } from "../../../services/wallet/credit-wallet-user.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { balances, createWalletUser, credit, eventsOf, subscriptionsRpc } from "../../support/subscriptions.ts";
import { advanceBy, advanceTo, approvedSubscription, chargesOf, DAY, subscriptionOf, waitForCharges, waitForStatus } from "../../support/billing.ts";
import { drainQueues, settle } from "../../support/sweeps.ts";

const DAY_MS = DAY * 1000;

/** Failed renewals: PAST_DUE, retries on DUNNING_RETRY_DAYS (default 1,3,5), recovery, the terminal status, retry on top-up. */
describe("recurring billing: dunning", () => {
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;

  const sys = useTestSystem();
  before(async () => {
    api = (await sys.createMerchant("Dunning")).api;
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
  });
  after(async () => {
    rpc?.close();
  });

  /** An ACTIVE monthly subscription whose wallet holds exactly the first payment, then its first renewal failed. */
  async function pastDue(amount = "10") {
    const arranged = await approvedSubscription(sys, api, client, { plan: { amount, interval: "MONTH" }, credits: { USDT_TRON: amount } });
    const active = await subscriptionOf(api, arranged.subscriptionId);
    await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
    const sub = await waitForStatus(api, arranged.subscriptionId, "PAST_DUE");
    return { ...arranged, active, sub, since: Date.parse(sub.pastDueSince) };
  }

  const types = async (id: string) => (await eventsOf(sys, id)).map((e) => e.type).filter((t) => t !== "subscription.charge_upcoming");

  it("retries on the schedule and recovers: ACTIVE again with the period it paid for", async () => {
    const { subscriptionId, user, active, sub, since } = await pastDue();
    expect(sub.nextRetryAt).to.equal(new Date(since + 1 * DAY_MS).toISOString());
    expect(sub.nextBillingAt).to.equal(active.nextBillingAt); // the unpaid period still starts there
    expect((await types(subscriptionId)).slice(-2)).to.deep.equal(["subscription.charge_failed", "subscription.past_due"]);

    // Retry 1 (day 1) fails too.
    await advanceTo(sys, new Date(since + 1 * DAY_MS + 1000));
    await waitForCharges(sys, subscriptionId, 3);
    const still = await subscriptionOf(api, subscriptionId);
    expect(still).to.include({ status: "PAST_DUE", pastDueSince: sub.pastDueSince, nextRetryAt: new Date(since + 3 * DAY_MS).toISOString() });
    expect((await types(subscriptionId)).slice(-2)).to.deep.equal(["subscription.past_due", "subscription.charge_failed"]);

    // Money arrives without telling the engine (operator CLI path); retry 2 (day 3) takes it.
    await creditWalletUser(sys.context(), { walletUserId: user.id, asset: "USDT_TRON", amount: "10" });
    await advanceTo(sys, new Date(since + 3 * DAY_MS + 1000));
    const recovered = await waitForStatus(api, subscriptionId, "ACTIVE");
    expect(recovered).to.include({
      currentPeriodStart: active.nextBillingAt,
      pastDueSince: null,
      nextRetryAt: null,
    });
    expect(Date.parse(recovered.nextBillingAt)).to.be.greaterThan(Date.parse(active.nextBillingAt));
    expect(recovered.currentPeriodEnd).to.equal(recovered.nextBillingAt);
    const charges = await chargesOf(sys, subscriptionId);
    expect(charges.map((c) => [c.period_index, c.attempt, c.status, c.failure_reason])).to.deep.equal([
      [0, 1, "SUCCEEDED", null],
      [1, 1, "FAILED", "INSUFFICIENT_FUNDS"],
      [1, 2, "FAILED", "INSUFFICIENT_FUNDS"],
      [1, 3, "SUCCEEDED", null],
    ]);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("0");
    expect((await types(subscriptionId)).slice(-2)).to.deep.equal(["subscription.charge_succeeded", "subscription.renewed"]);
  });

  it("after the last failed retry (day 5) the subscription is UNPAID and nothing is charged any more; cancel still works", async () => {
    const { subscriptionId, since } = await pastDue();
    for (const [day, attempts] of [
      [1, 3],
      [3, 4],
    ] as const) {
      await advanceTo(sys, new Date(since + day * DAY_MS + 1000));
      await waitForCharges(sys, subscriptionId, attempts);
    }
    expect((await subscriptionOf(api, subscriptionId)).nextRetryAt).to.equal(new Date(since + 5 * DAY_MS).toISOString());
    await advanceTo(sys, new Date(since + 5 * DAY_MS + 1000));
    const unpaid = await waitForStatus(api, subscriptionId, "UNPAID");
    expect(unpaid).to.include({ nextRetryAt: null, pastDueSince: new Date(since).toISOString() });
    expect(unpaid.unpaidAt).to.be.a("string");
    expect((await chargesOf(sys, subscriptionId)).filter((c) => c.period_index === 1).map((c) => c.status)).to.deep.equal([
      "FAILED",
      "FAILED",
      "FAILED",
      "FAILED",
    ]);
    expect((await types(subscriptionId)).slice(-2)).to.deep.equal(["subscription.charge_failed", "subscription.unpaid"]);

    await advanceBy(sys, 40 * DAY);
    await settle(sys); // every sweep has run 40 days on, and every job it queued
    expect(await chargesOf(sys, subscriptionId)).to.have.length(5);
    expect((await api.post(`/api/v1/subscriptions/${subscriptionId}/pause`)).status).to.equal(409);
    expect((await api.post(`/api/v1/subscriptions/${subscriptionId}/resume`)).status).to.equal(409);
    expect((await api.post(`/api/v1/subscriptions/${subscriptionId}/cancel`)).body.status).to.equal("CANCELLED");
  });

  it("a top-up that covers the amount due retries at once, oldest debt first; one that does not changes nothing", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "20" });
    const older = await approvedSubscription(sys, api, client, { plan: { amount: "10", interval: "MONTH" }, user });
    await advanceBy(sys, 3600);
    const newer = await approvedSubscription(sys, api, client, { plan: { amount: "10", interval: "MONTH" }, user });
    await advanceTo(sys, new Date(Date.parse((await subscriptionOf(api, older.subscriptionId)).nextBillingAt) + 60_000));
    await waitForStatus(api, older.subscriptionId, "PAST_DUE");
    await advanceTo(sys, new Date(Date.parse((await subscriptionOf(api, newer.subscriptionId)).nextBillingAt) + 60_000));
    await waitForStatus(api, newer.subscriptionId, "PAST_DUE");
    const before = await subscriptionOf(api, older.subscriptionId);

    await credit(sys, user.id, "USDT_TRON", "4"); // not enough for either
    await drainQueues(sys); // the top-up's job (queued before the credit answered) has run
    expect(await chargesOf(sys, older.subscriptionId)).to.have.length(2);
    expect(await subscriptionOf(api, older.subscriptionId)).to.include({ status: "PAST_DUE", nextRetryAt: before.nextRetryAt });

    await credit(sys, user.id, "USDT_TRON", "11"); // 15: covers one of the two
    const recovered = await waitForStatus(api, older.subscriptionId, "ACTIVE", 5_000);
    expect(Date.parse(recovered.updatedAt)).to.be.lessThan(Date.parse(before.nextRetryAt)); // at once, not at the scheduled retry
    await drainQueues(sys); // the same job went on to the newer subscription, or did not
    expect((await subscriptionOf(api, newer.subscriptionId)).status).to.equal("PAST_DUE");
    expect(await chargesOf(sys, newer.subscriptionId)).to.have.length(2); // not attempted: the balance did not cover it
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("5");
  });

  it("a frozen funding account fails with ACCOUNT_FROZEN", async () => {
    const { subscriptionId, user } = await approvedSubscription(sys, api, client, { plan: { amount: "1", interval: "DAY" }, credits: { USDT_TRON: "50" } });
    await sys.admin.post(`/admin/v1/wallet-users/${user.id}/accounts/freeze`, { asset: "USDT_TRON" });
    await advanceBy(sys, DAY + 60);
    await waitForStatus(api, subscriptionId, "PAST_DUE");
    const charges = await chargesOf(sys, subscriptionId);
    expect(charges.at(-1)).to.include({ status: "FAILED", failure_reason: "ACCOUNT_FROZEN" });
  });

  describe("with DUNNING_FINAL_STATUS=CANCELLED and DUNNING_RETRY_DAYS=2", () => {
    let otherRpc: ReturnType<typeof subscriptionsRpc>;
    const other = useTestSystem({ env: { DUNNING_FINAL_STATUS: "CANCELLED", DUNNING_RETRY_DAYS: "2" } });
    before(async () => {
      otherRpc = subscriptionsRpc(other);
    });
    after(async () => {
      otherRpc?.close();
    });

    it("the last failed retry cancels the subscription (reason PAYMENT_FAILED)", async () => {
      const m = await other.createMerchant("Strict");
      const { subscriptionId } = await approvedSubscription(other, m.api, otherRpc.client, {
        plan: { amount: "10", interval: "WEEK" },
        credits: { USDT_TRON: "10" },
      });
      await advanceBy(other, 7 * DAY + 60);
      const sub = await waitForStatus(m.api, subscriptionId, "PAST_DUE");
      expect(sub.nextRetryAt).to.equal(new Date(Date.parse(sub.pastDueSince) + 2 * DAY_MS).toISOString());
      await advanceBy(other, 2 * DAY);
      const cancelled = await waitForStatus(m.api, subscriptionId, "CANCELLED");
      expect(cancelled).to.include({ cancellationReason: "PAYMENT_FAILED", nextBillingAt: null, nextRetryAt: null });
      const events = (await eventsOf(other, subscriptionId)).map((e) => e.type);
      expect(events.slice(-2)).to.deep.equal(["subscription.charge_failed", "subscription.cancelled"]);
    });
  });
});

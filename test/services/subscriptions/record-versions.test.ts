import { expect } from "chai";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { createPlan, createSubscription, createWalletUser, eventsOf, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { eventually } from "../../support/eventually.ts";
import { advanceBy, approvedSubscription, DAY, subscriptionOf, waitForCharges, waitForQuiet } from "../../support/billing.ts";
import { changeEventTypes, changeOf, createChange } from "../../support/change-sessions.ts";

/**
 * Record versions (platform/record-version.ts): every change of a
 * subscription or change session raises its version by one, in the commit
 * that records the change's event; the event's data carries it, and so does
 * every REST body. Events about a subscription that are not its record name
 * its version in that commit (subscriptionVersion).
 */
describe("record versions: subscriptions and change sessions", function () {
  this.timeout(60_000);
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;

  const sys = useTestSystem();
  before(async () => {
    api = (await sys.createMerchant("Versions")).api;
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
  });
  after(async () => {
    rpc?.close();
  });

  const act = async (id: string, action: string) => {
    const res = await api.post(`/api/v1/subscriptions/${id}/${action}`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  it("1 created → 2 activated → 3 paused → 4 resumed → 5 cancelled: each event carries its change's version, GET and the list the latest", async () => {
    const plan = await createPlan(api, { amount: "3" });
    const user = await createWalletUser(sys, { USDT_TRON: "10" });
    const s = await createSubscription(api, plan.id, user.id);
    expect((await subscriptionOf(api, s.subscriptionId)).version).to.equal(1);

    await client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" });
    expect((await subscriptionOf(api, s.subscriptionId)).version).to.equal(2);
    expect((await act(s.subscriptionId, "pause")).version).to.equal(3);
    expect((await act(s.subscriptionId, "resume")).version).to.equal(4);
    const cancelled = await act(s.subscriptionId, "cancel");
    expect(cancelled).to.include({ status: "CANCELLED", version: 5 });

    const events = await eventsOf(sys, s.subscriptionId);
    expect(events.map((e) => [e.type, e.data.version ?? e.data.subscriptionVersion])).to.deep.equal([
      ["subscription.created", 1],
      // The first payment's success and the activation are one commit: the charge event names the version it left.
      ["subscription.charge_succeeded", 2],
      ["subscription.activated", 2],
      ["subscription.paused", 3],
      ["subscription.resumed", 4],
      ["subscription.cancelled", 5],
    ]);
    // The event of the last change is the record GET shows.
    expect(events.at(-1)!.data).to.deep.equal(cancelled);
    expect(await subscriptionOf(api, s.subscriptionId)).to.deep.equal(cancelled);
    const listed = (await api.get(`/api/v1/subscriptions?externalReference=${encodeURIComponent(cancelled.externalReference)}`)).body.data;
    expect(listed.map((r: any) => r.version)).to.deep.equal([5]);
  });

  it("a refused change is no change: a 409 leaves the version where it was", async () => {
    const plan = await createPlan(api, { amount: "1" });
    const user = await createWalletUser(sys, { USDT_TRON: "5" });
    const s = await createSubscription(api, plan.id, user.id);
    const res = await api.post(`/api/v1/subscriptions/${s.subscriptionId}/pause`);
    expect(res.status).to.equal(409);
    expect((await subscriptionOf(api, s.subscriptionId)).version).to.equal(1);
  });

  it("a renewal raises the version by one: subscription.renewed and its charge_succeeded carry it", async () => {
    const { subscriptionId } = await approvedSubscription(sys, api, client, { plan: { amount: "2", interval: "DAY" }, credits: { USDT_TRON: "10" } });
    expect((await subscriptionOf(api, subscriptionId)).version).to.equal(2);

    await advanceBy(sys, DAY + 60);
    await waitForCharges(sys, subscriptionId, 2);
    await waitForQuiet(sys);

    const sub = await subscriptionOf(api, subscriptionId);
    expect(sub).to.include({ status: "ACTIVE", version: 3 });
    const events = (await eventsOf(sys, subscriptionId)).filter((e) => e.type !== "subscription.charge_upcoming");
    const renewed = events.filter((e) => e.type === "subscription.renewed");
    expect(renewed).to.have.length(1);
    expect(renewed[0]!.data).to.deep.equal(sub);
    const charges = events.filter((e) => e.type === "subscription.charge_succeeded");
    expect(charges.map((e) => [e.data.charge.periodIndex, e.data.subscriptionVersion])).to.deep.equal([
      [0, 2],
      [1, 3],
    ]);
  });

  it("a failed renewal: charge_failed names the version its commit leaves, the one subscription.past_due carries", async () => {
    const { subscriptionId } = await approvedSubscription(sys, api, client, { plan: { amount: "6", interval: "DAY" }, credits: { USDT_TRON: "10" } });
    await advanceBy(sys, DAY + 60);
    await waitForCharges(sys, subscriptionId, 2);
    await waitForQuiet(sys);

    const sub = await subscriptionOf(api, subscriptionId);
    expect(sub).to.include({ status: "PAST_DUE", version: 3 });
    const events = (await eventsOf(sys, subscriptionId)).filter((e) => e.type !== "subscription.charge_upcoming");
    expect(events.slice(-2).map((e) => [e.type, e.data.version ?? e.data.subscriptionVersion])).to.deep.equal([
      ["subscription.charge_failed", 3],
      ["subscription.past_due", 3],
    ]);
    expect(events.at(-1)!.data).to.deep.equal(sub);
  });

  it("the set-based expiry sweep raises each expired subscription's version by one, in its record and its event", async () => {
    const plan = await createPlan(api, { amount: "1" });
    const user = await createWalletUser(sys, { USDT_TRON: "5" });
    const subs = [
      await createSubscription(api, plan.id, user.id, { authorizationExpiresInMinutes: 5 }),
      await createSubscription(api, plan.id, user.id, { authorizationExpiresInMinutes: 5 }),
    ];
    await advanceBy(sys, 6 * 60);
    for (const s of subs) {
      const expired = await eventually(
        async () => {
          const body = await subscriptionOf(api, s.subscriptionId);
          return body.status === "EXPIRED" ? body : undefined;
        },
        10_000,
        "expiry by the sweep",
      );
      expect(expired.version).to.equal(2);
      const events = await eventsOf(sys, s.subscriptionId);
      expect(events.map((e) => [e.type, e.data.version])).to.deep.equal([
        ["subscription.created", 1],
        ["subscription.expired", 2],
      ]);
      expect(events[1]!.data).to.deep.equal(expired);
    }
  });

  it("a refund names the subscription's version, which it does not change", async () => {
    const { subscriptionId } = await approvedSubscription(sys, api, client, { plan: { amount: "4" }, credits: { USDT_TRON: "10" } });
    const [charge] = (await api.get(`/api/v1/subscriptions/${subscriptionId}/charges`)).body.data;
    const res = await api.post("/api/v1/refunds", { chargeId: charge.id });
    expect(res.status, res.text).to.equal(201);
    const [event] = await sys.sql<{ data: any }>("select data from events where type = 'subscription.charge_refunded' and data->'refund'->>'id' = ?", [
      res.body.id,
    ]);
    expect(event!.data.subscriptionVersion).to.equal(2);
    expect((await subscriptionOf(api, subscriptionId)).version).to.equal(2);
  });

  describe("change sessions", () => {
    let basic: any;
    let pro: any;
    before(async () => {
      basic = await createPlan(api, { name: "Basic", amount: "10", currency: "USD", interval: "MONTH" });
      pro = await createPlan(api, { name: "Pro", amount: "25", currency: "USD", interval: "MONTH" });
    });

    async function subscriptionOnBasic() {
      const user = await createWalletUser(sys, { USDT_TRON: "100" });
      const s = await createSubscription(api, basic.id, user.id);
      await client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" });
      return { user, subscriptionId: s.subscriptionId };
    }

    /** [event type, version of the session in its data] of one change session, oldest first. */
    async function sessionVersions(changeSessionId: string) {
      const rows = await sys.sql<{ type: string; data: any }>("select type, data from events where data->>'id' = ? order by seq", [changeSessionId]);
      return rows.map((r) => [r.type, r.data.version]);
    }

    it("1 created → 2 approved (scheduled) → 3 cancelled by the merchant; GET and the list show the latest", async () => {
      const { user, subscriptionId } = await subscriptionOnBasic();
      const change = await createChange(api, subscriptionId, pro.id);
      expect(change.version).to.equal(1);
      const approved = await client.approveChangeSession({ token: tokenOf(change.approvalUrl), walletUserId: user.id });
      expect(approved.changeSession!.status).to.equal("SCHEDULED");
      expect((await changeOf(api, subscriptionId, change.id)).version).to.equal(2);

      const cancelled = await api.post(`/api/v1/subscriptions/${subscriptionId}/change-sessions/${change.id}/cancel`);
      expect(cancelled.status, cancelled.text).to.equal(200);
      expect(cancelled.body).to.include({ status: "CANCELLED", version: 3 });
      expect(await sessionVersions(change.id)).to.deep.equal([
        ["subscription.change_session.created", 1],
        ["subscription.change_session.approved", 2],
        ["subscription.change_session.cancelled", 3],
      ]);
      const listed = (await api.get(`/api/v1/subscriptions/${subscriptionId}/change-sessions`)).body.data;
      expect(listed.find((s: any) => s.id === change.id).version).to.equal(3);
      // Scheduling and withdrawing a change is no change of the subscription.
      expect((await subscriptionOf(api, subscriptionId)).version).to.equal(2);
    });

    it("an immediate change: the session's approval and application are one change (2), the subscription's plan change another (3)", async () => {
      const { user, subscriptionId } = await subscriptionOnBasic();
      const change = await createChange(api, subscriptionId, pro.id, { effectiveMode: "IMMEDIATE" });
      await client.approveChangeSession({ token: tokenOf(change.approvalUrl), walletUserId: user.id });
      expect(await changeEventTypes(sys, change.id)).to.include("subscription.plan_changed");
      expect(await sessionVersions(change.id)).to.deep.equal([
        ["subscription.change_session.created", 1],
        ["subscription.change_session.approved", 2],
        ["subscription.change_session.applied", 2],
      ]);
      const sub = await subscriptionOf(api, subscriptionId);
      expect(sub).to.include({ planId: pro.id, version: 3 });
      const [planChanged] = (await eventsOf(sys, subscriptionId)).filter((e) => e.type === "subscription.plan_changed");
      expect(planChanged!.data.version).to.equal(3);
    });

    it("a paid immediate change superseding a scheduled one: each session and the subscription move once; the charge names the plan change's version", async () => {
      const { user, subscriptionId } = await subscriptionOnBasic();
      const scheduled = await createChange(api, subscriptionId, pro.id);
      await client.approveChangeSession({ token: tokenOf(scheduled.approvalUrl), walletUserId: user.id });
      const premium = await createPlan(api, { name: "Premium", amount: "40", currency: "USD", interval: "MONTH" });
      const immediate = await createChange(api, subscriptionId, premium.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "5" });
      const res = await client.approveChangeSession({ token: tokenOf(immediate.approvalUrl), walletUserId: user.id });
      expect(res.approved, res.message).to.equal(true);

      expect(await changeOf(api, subscriptionId, scheduled.id)).to.include({ status: "CANCELLED", cancellationReason: "SUPERSEDED", version: 3 });
      expect(await changeOf(api, subscriptionId, immediate.id)).to.include({ status: "APPLIED", version: 2 });
      const sub = await subscriptionOf(api, subscriptionId);
      expect(sub).to.include({ planId: premium.id, version: 3 });
      const events = await eventsOf(sys, subscriptionId);
      const charged = events.filter((e) => e.type === "subscription.charge_succeeded").at(-1)!;
      expect(charged.data.charge.amount).to.equal("5");
      expect(charged.data.subscriptionVersion).to.equal(3);
      expect(events.filter((e) => e.type === "subscription.plan_changed").at(-1)!.data).to.deep.include(sub);
    });

    it("a decline raises the session's version once", async () => {
      const { subscriptionId } = await subscriptionOnBasic();
      const change = await createChange(api, subscriptionId, pro.id);
      const { changeSession } = await client.declineChangeSession({ token: tokenOf(change.approvalUrl) });
      expect(changeSession!.status).to.equal("DECLINED");
      expect(await changeOf(api, subscriptionId, change.id)).to.include({ status: "DECLINED", version: 2 });
    });
  });
});

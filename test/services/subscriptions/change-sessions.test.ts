import { expect } from "chai";
import { randomUUID } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { balances, createPlan, createSubscription, createWalletUser, credit, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { eventually } from "../../support/eventually.ts";
import { advanceClock, approvedSubscription, changeBody, changeEventTypes, changeOf, createChange, subscriptionOf } from "../../support/change-sessions.ts";
import { settle } from "../../support/sweeps.ts";

const DAY = 86_400;

/**
 * Plan change sessions through the REST API and the service (the hosted page
 * calls approve/decline after checking password and PIN; the browser test
 * drives the page itself).
 */
describe("plan change sessions", function () {
  this.timeout(60_000);
  let api: ApiClient;
  let other: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;
  let basic: any;
  let pro: any;

  const sys = useTestSystem();
  before(async () => {
    api = (await sys.createMerchant("Acme")).api;
    other = (await sys.createMerchant("Other")).api;
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
    basic = await createPlan(api, { name: "Basic", amount: "10", currency: "USD", interval: "MONTH" });
    pro = await createPlan(api, { name: "Pro", amount: "25", currency: "USD", interval: "MONTH", maximumChargeAmount: "40" });
  });
  after(async () => {
    rpc?.close();
  });

  const path = (subscriptionId: string) => `/api/v1/subscriptions/${subscriptionId}/change-sessions`;
  const approve = (approvalUrl: string, walletUserId: string) => client.approveChangeSession({ token: tokenOf(approvalUrl), walletUserId });

  async function activeOnBasic(credits: Record<string, string> = { USDT_TRON: "100" }) {
    const user = await createWalletUser(sys, credits);
    const subscriptionId = await approvedSubscription(api, client, basic.id, user.id);
    return { user, subscriptionId };
  }

  describe("create, read, validate", () => {
    it("201: the session record with an approval URL, defaults applied; GET and the list read it", async () => {
      const { subscriptionId } = await activeOnBasic();
      const res = await api.post(path(subscriptionId), changeBody(pro.id, { reason: "More seats", metadata: { ticket: 7 } }));
      expect(res.status, res.text).to.equal(201);
      const created = res.body;
      expect(created).to.include({
        object: "subscription_change_session",
        subscriptionId,
        status: "PENDING_APPROVAL",
        currentPlanId: basic.id,
        requestedPlanId: pro.id,
        effectiveMode: "NEXT_BILLING",
        immediateChargeAmount: "0",
        currency: "USD",
        reason: "More seats",
        scheduledFor: null,
        appliedAt: null,
      });
      expect(created.metadata).to.deep.equal({ ticket: 7 });
      expect(created.approvalUrl).to.match(/\/change\/[A-Za-z0-9_-]{43}$/);
      expect(Date.parse(created.expiresAt) - Date.parse(created.createdAt)).to.equal(60 * 60_000);

      // GET and the list read the same record, approvalUrl included while the session awaits the customer.
      const got = await api.get(`${path(subscriptionId)}/${created.id}`);
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(created);
      const list = await api.get(path(subscriptionId));
      expect(list.body).to.deep.equal({ data: [created], hasMore: false, nextCursor: null });
      expect((await api.get(`${path(subscriptionId)}?status=APPLIED`)).body.data).to.deep.equal([]);
      expect(await changeEventTypes(sys, created.id)).to.deep.equal(["subscription.change_session.created"]);
      // The event data is the record without the link (only the merchant's reads carry it).
      const [event] = await sys.sql<{ data: any }>("select data from events where type = 'subscription.change_session.created' and data->>'id' = ?", [
        created.id,
      ]);
      const { approvalUrl, ...record } = created;
      expect(event!.data).to.deep.equal(record);
      // Answered, the link is used up and no longer read back.
      await client.declineChangeSession({ token: tokenOf(approvalUrl) });
      expect((await api.get(`${path(subscriptionId)}/${created.id}`)).body).to.include({ status: "DECLINED", approvalUrl: null });
    });

    it("400 for every broken rule, naming the field", async () => {
      const { subscriptionId } = await activeOnBasic();
      const cases: [Record<string, unknown>, string][] = [
        [{ immediateChargeAmount: "5" }, "immediateChargeAmount"], // above zero with NEXT_BILLING (the default)
        [{ effectiveMode: "NEXT_BILLING", immediateChargeAmount: "0.01" }, "immediateChargeAmount"],
        [{ effectiveMode: "IMMEDIATE", immediateChargeAmount: "40.000000000000000001" }, "maximumChargeAmount"], // above the cap
        [{ effectiveMode: "IMMEDIATE", immediateChargeAmount: "-1" }, "immediateChargeAmount"],
        [{ effectiveMode: "IMMEDIATE", immediateChargeAmount: "1.0000000000000000001" }, "immediateChargeAmount"],
        [{ effectiveMode: "IMMEDIATE", immediateChargeAmount: 5 }, "immediateChargeAmount"],
        [{ effectiveMode: "LATER" }, "effectiveMode"],
        [{ reason: "x".repeat(1001) }, "reason"],
        [{ successUrl: "javascript:alert(1)" }, "successUrl"],
        [{ cancelUrl: "not a url" }, "cancelUrl"],
        [{ requestedPlanId: "not-a-uuid" }, "requestedPlanId"],
        [{ metadata: [] }, "metadata"],
        [{ unknownField: true }, "unknownField"],
      ];
      for (const [overrides, field] of cases) {
        const res = await api.post(path(subscriptionId), changeBody(pro.id, overrides));
        expect(res.status, `${JSON.stringify(overrides)} → ${res.text}`).to.equal(400);
        expect(res.body.error).to.equal("INVALID_REQUEST");
        expect(res.body.message).to.include(field);
      }
      const missing = await api.post(path(subscriptionId), { successUrl: "https://a.example", cancelUrl: "https://a.example" });
      expect(missing.status).to.equal(400);
      expect(missing.body.message).to.include("requestedPlanId");
      // At the limits: accepted.
      const ok = await api.post(
        path(subscriptionId),
        changeBody(pro.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "40", reason: "x".repeat(1000) }),
      );
      expect(ok.status, ok.text).to.equal(201);
      const longKey = await api.post(path(subscriptionId), changeBody(pro.id), { "idempotency-key": "k".repeat(201) });
      expect(longKey.status).to.equal(400);
      expect(longKey.body.message).to.include("Idempotency-Key");
    });

    it("404 for an unknown or another merchant's subscription or plan; sessions are invisible to other merchants", async () => {
      const { subscriptionId } = await activeOnBasic();
      const foreignPlan = await createPlan(other, { name: "Theirs" });
      const cases: [string, string, string][] = [
        [randomUUID(), pro.id, "SUBSCRIPTION_NOT_FOUND"],
        ["not-a-uuid", pro.id, "SUBSCRIPTION_NOT_FOUND"],
        [subscriptionId, randomUUID(), "PLAN_NOT_FOUND"],
        [subscriptionId, foreignPlan.id, "PLAN_NOT_FOUND"],
      ];
      for (const [sub, plan, code] of cases) {
        const res = await api.post(path(sub), changeBody(plan));
        expect(res.status, res.text).to.equal(404);
        expect(res.body.error).to.equal(code);
      }
      const created = await createChange(api, subscriptionId, pro.id);
      for (const res of [
        await other.post(path(subscriptionId), changeBody(foreignPlan.id)),
        await other.get(path(subscriptionId)),
        await other.get(`${path(subscriptionId)}/${created.id}`),
      ]) {
        expect(res.status, res.text).to.equal(404);
        expect(res.body.error).to.equal("SUBSCRIPTION_NOT_FOUND");
      }
      const wrongSession = await api.get(`${path(subscriptionId)}/${randomUUID()}`);
      expect(wrongSession.status).to.equal(404);
      expect(wrongSession.body.error).to.equal("CHANGE_SESSION_NOT_FOUND");
      // The session belongs to its subscription: under another subscription of the same merchant it is not found.
      const { subscriptionId: second } = await activeOnBasic();
      expect((await api.get(`${path(second)}/${created.id}`)).body.error).to.equal("CHANGE_SESSION_NOT_FOUND");
    });

    it("409 when the subscription cannot change: status, same plan, an open session (one at a time, even under a burst)", async () => {
      const user = await createWalletUser(sys, { USDT_TRON: "100" });
      const pending = await createSubscription(api, basic.id, user.id);
      let res = await api.post(path(pending.subscriptionId), changeBody(pro.id));
      expect(res.status).to.equal(409);
      expect(res.body).to.deep.include({ error: "SUBSCRIPTION_NOT_CHANGEABLE" });
      expect(res.body.message).to.include("PENDING_APPROVAL");

      const { subscriptionId } = await activeOnBasic();
      res = await api.post(path(subscriptionId), changeBody(basic.id));
      expect(res.status).to.equal(409);
      expect(res.body.error).to.equal("SAME_PLAN");

      const burst = await Promise.all(Array.from({ length: 8 }, () => api.post(path(subscriptionId), changeBody(pro.id))));
      expect(burst.filter((r) => r.status === 201)).to.have.length(1);
      for (const r of burst.filter((r) => r.status !== 201)) expect(r.body.error, r.text).to.equal("CHANGE_SESSION_ALREADY_OPEN");
      expect((await api.get(path(subscriptionId))).body.data).to.have.length(1);

      const cancelled = await api.post(`/api/v1/subscriptions/${subscriptionId}/cancel`);
      expect(cancelled.status).to.equal(200);
      res = await api.post(path(subscriptionId), changeBody(pro.id));
      expect(res.status).to.equal(409);
      expect(res.body.error).to.equal("SUBSCRIPTION_NOT_CHANGEABLE");
      expect(res.body.message).to.include("CANCELLED");
    });

    it("Idempotency-Key: a retry returns the first response and creates nothing; another body with the key → 409", async () => {
      const { subscriptionId } = await activeOnBasic();
      const key = `change-${randomUUID()}`;
      const first = await api.post(path(subscriptionId), changeBody(pro.id), { "idempotency-key": key });
      expect(first.status).to.equal(201);
      const again = await api.post(path(subscriptionId), changeBody(pro.id), { "idempotency-key": key });
      expect(again.status).to.equal(201);
      expect(again.body).to.deep.equal(first.body);
      expect(again.headers.get("idempotent-replayed")).to.equal("true");
      const reused = await api.post(path(subscriptionId), changeBody(pro.id, { reason: "other" }), { "idempotency-key": key });
      expect(reused.status).to.equal(409);
      expect(reused.body.error).to.equal("IDEMPOTENCY_KEY_REUSED");
      expect((await api.get(path(subscriptionId))).body.data).to.have.length(1);
      // Without the key the database's one-open-session rule still refuses a duplicate.
      expect((await api.post(path(subscriptionId), changeBody(pro.id))).body.error).to.equal("CHANGE_SESSION_ALREADY_OPEN");
    });

    it("paginates a subscription's sessions newest first", async () => {
      const { user, subscriptionId } = await activeOnBasic();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const s = await createChange(api, subscriptionId, pro.id);
        ids.unshift(s.id);
        await client.declineChangeSession({ token: tokenOf(s.approvalUrl) });
      }
      void user;
      const page1 = (await api.get(`${path(subscriptionId)}?limit=2`)).body;
      expect(page1.data.map((s: any) => s.id)).to.deep.equal(ids.slice(0, 2));
      expect(page1.hasMore).to.equal(true);
      const page2 = (await api.get(`${path(subscriptionId)}?limit=2&cursor=${page1.nextCursor}`)).body;
      expect(page2.data.map((s: any) => s.id)).to.deep.equal(ids.slice(2));
      expect(page2.hasMore).to.equal(false);
      expect((await api.get(`${path(subscriptionId)}?status=DECLINED`)).body.data).to.have.length(3);
    });
  });

  describe("IMMEDIATE", () => {
    it("without a charge: approval switches the plan at once, keeps the anchor, the period and the next billing date", async () => {
      const { user, subscriptionId } = await activeOnBasic();
      const before = await subscriptionOf(api, subscriptionId);
      const change = await createChange(api, subscriptionId, pro.id, { effectiveMode: "IMMEDIATE" });
      const res = await approve(change.approvalUrl, user.id);
      expect(res.approved, res.message).to.equal(true);
      expect(res.changeSession).to.include({ status: "APPLIED" });
      expect(res.charge).to.equal(undefined);

      const after = await subscriptionOf(api, subscriptionId);
      expect(after).to.include({ planId: pro.id, status: "ACTIVE" });
      for (const field of ["billingAnchor", "currentPeriodStart", "currentPeriodEnd", "nextBillingAt", "fundingAsset"])
        expect(after[field]).to.equal(before[field]);
      const session = await changeOf(api, subscriptionId, change.id);
      expect(session).to.include({ status: "APPLIED", chargeId: null });
      expect(session.approvedAt).to.equal(session.appliedAt);
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("90");
      expect(await changeEventTypes(sys, change.id)).to.deep.equal([
        "subscription.change_session.created",
        "subscription.change_session.approved",
        "subscription.change_session.applied",
        "subscription.plan_changed",
      ]);
      const [planChanged] = await sys.sql("select data from events where type = 'subscription.plan_changed' and data->>'changeSessionId' = ?", [change.id]);
      expect(planChanged.data).to.include({ id: subscriptionId, planId: pro.id, previousPlanId: basic.id });
      // Single use.
      expect((await api.get(`${path(subscriptionId)}?status=APPLIED`)).body.data).to.have.length(1);
      await expectCode(approve(change.approvalUrl, user.id), "AUTHORIZATION_USED");
    });

    it("with a charge: takes it once through the ledger (a charge row linked to the session), then switches", async () => {
      const { user, subscriptionId } = await activeOnBasic();
      const change = await createChange(api, subscriptionId, pro.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "7.5" });
      const res = await approve(change.approvalUrl, user.id);
      expect(res.approved, res.message).to.equal(true);
      expect(res.charge).to.include({ status: "SUCCEEDED", amount: "7.5", currency: "USD", asset: "USDT_TRON", assetAmount: "7.5", attempt: 1 });
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("82.5");
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(pro.id);
      const session = await changeOf(api, subscriptionId, change.id);
      expect(session).to.include({ status: "APPLIED", chargeId: res.charge!.id });
      const rows = await sys.sql(
        "select change_session_id, status, wallet_transaction_id from subscription_charges where subscription_id = ? order by created_at",
        [subscriptionId],
      );
      expect(rows).to.have.length(2);
      expect(rows[1]).to.include({ change_session_id: change.id, status: "SUCCEEDED" });
      expect(rows[1].wallet_transaction_id).to.be.a("string");
      expect(await changeEventTypes(sys, change.id)).to.deep.equal([
        "subscription.change_session.created",
        "subscription.change_session.approved",
        "subscription.change_session.applied",
        "subscription.plan_changed",
      ]);
      const check = await sys.admin.get("/admin/v1/ledger/check");
      expect(check.body.ok, JSON.stringify(check.body)).to.equal(true);
      // Approving again moves nothing.
      await expectCode(approve(change.approvalUrl, user.id), "AUTHORIZATION_USED");
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("82.5");
    });

    it("insufficient balance: refused with a message, nothing changes; after a top-up the same link approves", async () => {
      const { user, subscriptionId } = await activeOnBasic({ USDT_TRON: "15" });
      const change = await createChange(api, subscriptionId, pro.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "20" });
      const refused = await approve(change.approvalUrl, user.id);
      expect(refused.approved).to.equal(false);
      expect(refused.refusalReason).to.equal("INSUFFICIENT_FUNDS");
      expect(refused.message).to.include("balance does not cover 20 USDT_TRON");
      expect(refused.changeSession!.status).to.equal("PENDING_APPROVAL");
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("5");
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(basic.id);
      expect(await changeEventTypes(sys, change.id)).to.deep.equal(["subscription.change_session.created"]);

      await credit(sys, user.id, "USDT_TRON", "15");
      const ok = await approve(change.approvalUrl, user.id);
      expect(ok.approved, ok.message).to.equal(true);
      expect(ok.charge).to.include({ attempt: 2, status: "SUCCEEDED" });
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("0");
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(pro.id);
    });

    it("on a TRIALING subscription: switches at once, the trial and its end date stay", async () => {
      const trial = await createPlan(api, { name: "Trial Basic", amount: "10", trialDays: 14 });
      const user = await createWalletUser(sys, { USDT_TRON: "50" });
      const subscriptionId = await approvedSubscription(api, client, trial.id, user.id);
      const before = await subscriptionOf(api, subscriptionId);
      const change = await createChange(api, subscriptionId, pro.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "1" });
      const res = await approve(change.approvalUrl, user.id);
      expect(res.approved, res.message).to.equal(true);
      const after = await subscriptionOf(api, subscriptionId);
      expect(after).to.include({ status: "TRIALING", planId: pro.id, trialEnd: before.trialEnd, nextBillingAt: before.nextBillingAt });
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("49");
    });
  });

  describe("NEXT_BILLING", () => {
    it("approval schedules it for the next billing date; at that date the plan switches before the renewal is charged", async () => {
      const { user, subscriptionId } = await activeOnBasic();
      const before = await subscriptionOf(api, subscriptionId);
      const change = await createChange(api, subscriptionId, pro.id);
      const res = await approve(change.approvalUrl, user.id);
      expect(res.approved, res.message).to.equal(true);
      expect(res.changeSession!.status).to.equal("SCHEDULED");
      const scheduled = await changeOf(api, subscriptionId, change.id);
      expect(scheduled).to.include({ status: "SCHEDULED", scheduledFor: before.nextBillingAt, appliedAt: null });
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(basic.id);
      expect(await changeEventTypes(sys, change.id)).to.deep.equal(["subscription.change_session.created", "subscription.change_session.approved"]);

      await advanceClock(sys, 31 * DAY);
      const applied = await eventually(
        async () => {
          const s = await changeOf(api, subscriptionId, change.id);
          return s.status === "APPLIED" ? s : undefined;
        },
        10_000,
        "the scheduled change to apply",
      );
      expect(Date.parse(applied.appliedAt)).to.be.at.least(Date.parse(before.nextBillingAt));
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(pro.id);
      expect(await changeEventTypes(sys, change.id)).to.deep.equal([
        "subscription.change_session.created",
        "subscription.change_session.approved",
        "subscription.change_session.applied",
        "subscription.plan_changed",
      ]);
      // The renewal engine (recurring billing) charges the period starting at that date at the new plan's amount.
      const renewal = await eventually(
        async () => {
          const rows = await sys.sql(
            "select amount::text, status from subscription_charges where subscription_id = ? and period_index = 1 and change_session_id is null",
            [subscriptionId],
          );
          return rows.find((r) => r.status === "SUCCEEDED");
        },
        10_000,
        "the renewal at the new amount",
      );
      expect(Number(renewal.amount)).to.equal(25);
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("65");
    });

    it("a second approved change supersedes the scheduled one", async () => {
      const premium = await createPlan(api, { name: "Premium", amount: "40", interval: "MONTH" });
      const { user, subscriptionId } = await activeOnBasic();
      const first = await createChange(api, subscriptionId, pro.id);
      expect((await approve(first.approvalUrl, user.id)).approved).to.equal(true);
      // A scheduled change is not "open": another session may be created, and its approval replaces it.
      const second = await createChange(api, subscriptionId, premium.id);
      expect((await approve(second.approvalUrl, user.id)).approved).to.equal(true);
      expect(await changeOf(api, subscriptionId, first.id)).to.include({ status: "CANCELLED", cancellationReason: "SUPERSEDED", supersededBy: second.id });
      expect((await changeOf(api, subscriptionId, second.id)).status).to.equal("SCHEDULED");
      expect(await changeEventTypes(sys, first.id)).to.include("subscription.change_session.cancelled");
    });

    it("cancelling the subscription cancels its scheduled change in the same transaction", async () => {
      const { user, subscriptionId } = await activeOnBasic();
      const change = await createChange(api, subscriptionId, pro.id);
      expect((await approve(change.approvalUrl, user.id)).approved).to.equal(true);
      const cancelled = await api.post(`/api/v1/subscriptions/${subscriptionId}/cancel`);
      expect(cancelled.status).to.equal(200);
      const session = await changeOf(api, subscriptionId, change.id);
      expect(session).to.include({ status: "CANCELLED", cancellationReason: "SUBSCRIPTION_CANCELLED" });
      expect(session.cancelledAt).to.equal(cancelled.body.cancelledAt);
      const seqs = await sys.sql<{ type: string; txid: string }>(
        "select type, xmin::text as txid from events where (data->>'id' = ? and type = 'subscription.cancelled') or (data->>'id' = ? and type = 'subscription.change_session.cancelled')",
        [subscriptionId, change.id],
      );
      expect(seqs).to.have.length(2);
      expect(seqs[0]!.txid).to.equal(seqs[1]!.txid);
      await advanceClock(sys, 31 * DAY);
      await settle(sys); // the change sweep and the renewal engine have run past the billing date
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(basic.id);
      expect((await changeOf(api, subscriptionId, change.id)).status).to.equal("CANCELLED");
    });

    it("pausing keeps the scheduled change: nothing applies while paused, it applies at the first billing after resume", async () => {
      const { user, subscriptionId } = await activeOnBasic();
      const change = await createChange(api, subscriptionId, pro.id);
      expect((await approve(change.approvalUrl, user.id)).approved).to.equal(true);
      expect((await api.post(`/api/v1/subscriptions/${subscriptionId}/pause`)).status).to.equal(200);
      await advanceClock(sys, 31 * DAY);
      await settle(sys); // every sweep has run past the billing date, and every job it queued
      expect((await changeOf(api, subscriptionId, change.id)).status).to.equal("SCHEDULED");
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(basic.id);

      const resumed = await api.post(`/api/v1/subscriptions/${subscriptionId}/resume`);
      expect(resumed.status).to.equal(200);
      const next = Date.parse(resumed.body.nextBillingAt);
      const now = Date.parse((await sys.admin.get("/admin/v1/sandbox/clock")).body.now);
      // The resume rule moved the next billing date ahead (the periods missed while paused are skipped): the change waits for it.
      expect(next).to.be.greaterThan(now);
      await settle(sys);
      expect((await changeOf(api, subscriptionId, change.id)).status).to.equal("SCHEDULED");
      await advanceClock(sys, Math.ceil((next - now) / 1000) + 60);
      await eventually(async () => ((await changeOf(api, subscriptionId, change.id)).status === "APPLIED" ? true : undefined), 10_000, "apply after resume");
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(pro.id);
    });
  });

  describe("the customer's answer and expiry", () => {
    it("decline: DECLINED, the subscription is untouched, the link is used up", async () => {
      const { user, subscriptionId } = await activeOnBasic();
      const change = await createChange(api, subscriptionId, pro.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "5" });
      const { changeSession } = await client.declineChangeSession({ token: tokenOf(change.approvalUrl) });
      expect(changeSession!.status).to.equal("DECLINED");
      expect((await changeOf(api, subscriptionId, change.id)).declinedAt).to.be.a("string");
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(basic.id);
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("90");
      expect(await changeEventTypes(sys, change.id)).to.deep.equal(["subscription.change_session.created", "subscription.change_session.declined"]);
      await expectCode(approve(change.approvalUrl, user.id), "AUTHORIZATION_USED");
      // A declined session is not open: the merchant may propose again.
      expect((await api.post(path(subscriptionId), changeBody(pro.id))).status).to.equal(201);
    });

    it("only the subscription's wallet user may answer", async () => {
      const { subscriptionId } = await activeOnBasic();
      const stranger = await createWalletUser(sys, { USDT_TRON: "100" });
      const change = await createChange(api, subscriptionId, pro.id, { effectiveMode: "IMMEDIATE" });
      await expectCode(approve(change.approvalUrl, stranger.id), "WALLET_USER_MISMATCH");
      await expectCode(client.approveChangeSession({ token: "A".repeat(43), walletUserId: stranger.id }), "CHANGE_SESSION_NOT_FOUND");
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(basic.id);
    });

    it("expiry: unanswered after 60 minutes → EXPIRED (by job or sweep), with its event; it no longer blocks a new session", async () => {
      const { user, subscriptionId } = await activeOnBasic();
      const change = await createChange(api, subscriptionId, pro.id);
      await advanceClock(sys, 61 * 60);
      // Overdue reads as expired at once, even before anything expired it.
      await expectCode(approve(change.approvalUrl, user.id), "AUTHORIZATION_EXPIRED");
      const expired = await eventually(
        async () => {
          const s = await changeOf(api, subscriptionId, change.id);
          return s.status === "EXPIRED" ? s : undefined;
        },
        10_000,
        "expiry",
      );
      expect(expired.expiredAt).to.be.a("string");
      expect(await changeEventTypes(sys, change.id)).to.deep.equal(["subscription.change_session.created", "subscription.change_session.expired"]);
      expect((await api.post(path(subscriptionId), changeBody(pro.id))).status).to.equal(201);
    });
  });

  async function expectCode(p: Promise<unknown>, code: string) {
    const { ConnectError } = await import("@connectrpc/connect");
    const { errorCodeOf } = await import("../../../services/platform/rpc/error-code.ts");
    try {
      await p;
    } catch (err) {
      if (err instanceof ConnectError) return expect(errorCodeOf(err)).to.equal(code);
      throw err;
    }
    expect.fail(`expected ${code}`);
  }
});

import { expect } from "chai";
import { useTestSystem } from "../../support/system.ts";
import { createPlan, createWalletUser, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { approvedSubscription, changeEventTypes, changeOf, createChange } from "../../support/change-sessions.ts";
import type { ApiClient } from "../../support/http.ts";

/** POST /api/v1/subscriptions/{id}/change-sessions/{sessionId}/cancel: the merchant withdraws a proposal. */
describe("merchant cancels a change session", () => {
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let current: { id: string };
  let requested: { id: string };
  let walletUserId: string;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    api = (await sys.createMerchant()).api;
    rpc = subscriptionsRpc(sys);
    walletUserId = (await createWalletUser(sys, { USDT_TRON: "1000" })).id;
    current = await createPlan(api, { name: "Basic", amount: "10" });
    requested = await createPlan(api, { name: "Plus", amount: "20" });
  });
  after(async () => {
    rpc?.close();
  });

  const cancel = (subscriptionId: string, sessionId: string, client = api) =>
    client.post(`/api/v1/subscriptions/${subscriptionId}/change-sessions/${sessionId}/cancel`);

  it("withdraws a session awaiting approval: CANCELLED, event recorded, the link no longer approves", async () => {
    const subscriptionId = await approvedSubscription(api, rpc.client, current.id, walletUserId);
    const session = await createChange(api, subscriptionId, requested.id);
    const res = await cancel(subscriptionId, session.id);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ id: session.id, status: "CANCELLED", cancellationReason: "MERCHANT_CANCELLED" });
    expect(res.body.approvalUrl).to.equal(null);
    expect(await changeEventTypes(sys, session.id)).to.include("subscription.change_session.cancelled");
    const approve = await rpc.client.approveChangeSession({ token: tokenOf(session.approvalUrl), walletUserId }).catch((e) => e);
    expect(approve.approved ?? false).to.equal(false);
    // A new proposal can be made at once: nothing is open any more.
    expect((await createChange(api, subscriptionId, requested.id)).status).to.equal("PENDING_APPROVAL");
  });

  it("withdraws a scheduled change, so the next billing keeps the current plan", async () => {
    const subscriptionId = await approvedSubscription(api, rpc.client, current.id, walletUserId);
    const session = await createChange(api, subscriptionId, requested.id, { effectiveMode: "NEXT_BILLING" });
    const approved = await rpc.client.approveChangeSession({ token: tokenOf(session.approvalUrl), walletUserId });
    expect(approved.approved).to.equal(true);
    expect((await changeOf(api, subscriptionId, session.id)).status).to.equal("SCHEDULED");
    const res = await cancel(subscriptionId, session.id);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.status).to.equal("CANCELLED");
    const sub = (await api.get(`/api/v1/subscriptions/${subscriptionId}`)).body;
    expect(sub.planId).to.equal(current.id);
  });

  it("answers 409 once the session is settled, and 404 for unknown or other merchants' ids", async () => {
    const subscriptionId = await approvedSubscription(api, rpc.client, current.id, walletUserId);
    const session = await createChange(api, subscriptionId, requested.id, { effectiveMode: "IMMEDIATE" });
    const applied = await rpc.client.approveChangeSession({ token: tokenOf(session.approvalUrl), walletUserId });
    expect(applied.approved).to.equal(true);
    const late = await cancel(subscriptionId, session.id);
    expect(late.status).to.equal(409);
    expect(late.body.error).to.equal("INVALID_STATUS_TRANSITION");
    expect(late.body.message).to.contain("APPLIED");

    const other = await sys.createMerchant("Other");
    expect((await cancel(subscriptionId, session.id, other.api)).body.error).to.equal("SUBSCRIPTION_NOT_FOUND");
    const unknown = await cancel(subscriptionId, "00000000-0000-4000-8000-000000000000");
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error).to.equal("CHANGE_SESSION_NOT_FOUND");
    expect((await cancel(subscriptionId, "not-a-uuid")).status).to.equal(404);
  });
});

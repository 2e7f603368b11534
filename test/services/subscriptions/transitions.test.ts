import { expect } from "chai";
import { nextStatus, type SubscriptionEvent } from "../../../services/subscriptions/status-machine.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient, ApiResponse } from "../../support/http.ts";
import { createPlan, createSubscription, createWalletUser, eventsOf, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";

const EVENT_OF: Record<string, SubscriptionEvent> = {
  "subscription.paused": "pause",
  "subscription.resumed": "resume",
  "subscription.cancelled": "cancel",
};

/** Pause, resume and cancel through REST, one at a time and many at once on one subscription. */
describe("subscription lifecycle transitions", () => {
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let plan: any;
  let trialPlan: any;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    api = (await sys.createMerchant()).api;
    rpc = subscriptionsRpc(sys);
    plan = await createPlan(api, { amount: "1" });
    trialPlan = await createPlan(api, { amount: "1", trialDays: 7 });
  });
  after(async () => {
    rpc?.close();
  });

  async function approvedSubscription(trial = false): Promise<string> {
    const user = await createWalletUser(sys, { USDT_TRON: "5" });
    const s = await createSubscription(api, (trial ? trialPlan : plan).id, user.id);
    await rpc.client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" });
    return s.subscriptionId;
  }
  const act = (id: string, action: string) => api.post(`/api/v1/subscriptions/${id}/${action}`);
  const expectConflict = (res: ApiResponse, status: string) => {
    expect(res.status, res.text).to.equal(409);
    expect(res.body.error).to.equal("INVALID_STATUS_TRANSITION");
    expect(res.body.message).to.include(`status ${status}`);
  };

  /** Replays the recorded events through the status machine: every step must be a move the table allows. */
  async function assertEventsFollowTheTable(id: string, start: string): Promise<string> {
    const events = (await eventsOf(sys, id)).filter((e) => EVENT_OF[e.type]);
    let status = start;
    let pausedFrom: string | null = null;
    for (const e of events) {
      const to = nextStatus(status, EVENT_OF[e.type]!, pausedFrom);
      expect(e.data.status, `${e.type} from ${status}`).to.equal(to);
      pausedFrom = to === "PAUSED" ? status : null;
      status = to;
    }
    return status;
  }

  it("ACTIVE → pause → PAUSED → resume → ACTIVE → cancel → CANCELLED, each answering 200 with the record", async () => {
    const id = await approvedSubscription();
    const paused = await act(id, "pause");
    expect(paused.status).to.equal(200);
    expect(paused.body).to.include({ id, status: "PAUSED" });
    expect(paused.body.pausedAt).to.be.a("string");
    expectConflict(await act(id, "pause"), "PAUSED");
    const resumed = await act(id, "resume");
    expect(resumed.status).to.equal(200);
    expect(resumed.body).to.include({ status: "ACTIVE", pausedAt: null });
    expectConflict(await act(id, "resume"), "ACTIVE");
    const cancelled = await act(id, "cancel");
    expect(cancelled.body).to.include({ status: "CANCELLED", nextBillingAt: null, cancellationReason: "MERCHANT_CANCELLED" });
    for (const action of ["pause", "resume", "cancel"]) expectConflict(await act(id, action), "CANCELLED");
    const events = await eventsOf(sys, id);
    expect(events.map((e) => e.type).slice(-3)).to.deep.equal(["subscription.paused", "subscription.resumed", "subscription.cancelled"]);
    expect(events.at(-1)!.data).to.deep.equal(cancelled.body);
  });

  it("a paused trial resumes to TRIALING; a paused subscription can be cancelled", async () => {
    const id = await approvedSubscription(true);
    expect((await act(id, "pause")).body.status).to.equal("PAUSED");
    expect((await act(id, "resume")).body.status).to.equal("TRIALING");
    expect((await act(id, "pause")).body.status).to.equal("PAUSED");
    expect((await act(id, "cancel")).body.status).to.equal("CANCELLED");
  });

  it("competing cancels: exactly one succeeds, the rest are 409", async () => {
    const id = await approvedSubscription();
    const results = await Promise.all(Array.from({ length: 12 }, () => act(id, "cancel")));
    expect(results.filter((r) => r.status === 200)).to.have.length(1);
    for (const r of results.filter((r) => r.status !== 200)) expectConflict(r, "CANCELLED");
    expect((await eventsOf(sys, id)).filter((e) => e.type === "subscription.cancelled")).to.have.length(1);
  });

  it("many parallel pause/resume/cancel requests never make a move the table forbids", async () => {
    for (let round = 0; round < 3; round++) {
      const id = await approvedSubscription(round === 1);
      const start = round === 1 ? "TRIALING" : "ACTIVE";
      const actions = Array.from({ length: 30 }, (_, i) => (["pause", "resume", "cancel"] as const)[i % 3]!);
      const results = await Promise.all(actions.map((a) => act(id, a).then((res) => ({ a, res }))));
      for (const { res } of results) expect([200, 409], res.text).to.include(res.status);
      const ok = (a: string) => results.filter((r) => r.a === a && r.res.status === 200).length;
      expect(ok("cancel")).to.equal(1);

      const final = await assertEventsFollowTheTable(id, start);
      expect(final).to.equal("CANCELLED");
      expect((await api.get(`/api/v1/subscriptions/${id}`)).body.status).to.equal(final);
      const events = await eventsOf(sys, id);
      // One event per successful request, no more, no less.
      expect(events.filter((e) => e.type === "subscription.paused")).to.have.length(ok("pause"));
      expect(events.filter((e) => e.type === "subscription.resumed")).to.have.length(ok("resume"));
    }
  });

  it("parallel pause/resume without cancel: the final status is the one the last event says", async () => {
    const id = await approvedSubscription();
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => act(id, i % 2 ? "resume" : "pause")));
    for (const res of results) expect([200, 409], res.text).to.include(res.status);
    const final = await assertEventsFollowTheTable(id, "ACTIVE");
    expect((await api.get(`/api/v1/subscriptions/${id}`)).body.status).to.equal(final);
    const pauses = results.filter((r, i) => i % 2 === 0 && r.status === 200).length;
    const resumes = results.filter((r, i) => i % 2 === 1 && r.status === 200).length;
    expect(pauses - resumes).to.equal(final === "PAUSED" ? 1 : 0);
  });
});

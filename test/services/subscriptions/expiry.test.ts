import { expect } from "chai";
import { expireAuthorizationKind } from "../../../services/subscriptions/subscription-queue.ts";
import { expireAuthorization } from "../../../services/subscriptions/expire-authorization.ts";
import { handlersOf, type TestSystem, useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { createPlan, createSubscription, createWalletUser, eventsOf, localUrl, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { eventually } from "../../support/eventually.ts";

const advance = async (sys: TestSystem, seconds: number) => {
  const res = await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds });
  expect(res.status, res.text).to.equal(200);
};
const statusOf = async (api: ApiClient, id: string) => (await api.get(`/api/v1/subscriptions/${id}`)).body;

describe("authorization expiry", () => {
  describe("by the expire-authorization job (no sweep running)", () => {
    let api: ApiClient;
    let plan: any;
    let userId: string;

    // Only the job: whatever expires here, the job did it.
    const sys = useTestSystem({ jobs: handlersOf(expireAuthorizationKind) });
    before(async () => {
      api = (await sys.createMerchant()).api;
      plan = await createPlan(api);
      userId = (await createWalletUser(sys)).id;
    });

    it("create schedules no delayed job (the sweep expires); a job (queued by an earlier version) early does nothing, on time it expires", async () => {
      const s = await createSubscription(api, plan.id, userId, { authorizationExpiresInMinutes: 5 });
      const queue = sys.system.queues!.queue("scheduler");
      expect(await queue.getJob(expireAuthorizationKind.id({ subscriptionId: s.subscriptionId })), "delayed job").to.equal(undefined);

      // Fired early (say, clocks disagree): nothing happens.
      const early = await queue.add(
        expireAuthorizationKind.name,
        { subscriptionId: s.subscriptionId },
        { jobId: expireAuthorizationKind.id({ subscriptionId: s.subscriptionId }) },
      );
      await eventually(async () => ((await early.getState()) === "completed" ? true : undefined), 5_000, "early job to complete");
      expect((await statusOf(api, s.subscriptionId)).status).to.equal("PENDING_APPROVAL");

      // On time (the service clock passed the expiry): EXPIRED, once.
      await advance(sys, 301);
      await queue.add(
        expireAuthorizationKind.name,
        { subscriptionId: s.subscriptionId },
        { jobId: `${expireAuthorizationKind.id({ subscriptionId: s.subscriptionId })}-retry` },
      );
      const expired = await eventually(
        async () => {
          const body = await statusOf(api, s.subscriptionId);
          return body.status === "EXPIRED" ? body : undefined;
        },
        5_000,
        "expiry by the job",
      );
      expect(expired.authorization).to.include({ status: "EXPIRED" });
      expect(expired.expiredAt).to.be.a("string");
      const events = await eventsOf(sys, s.subscriptionId);
      expect(events.map((e) => e.type)).to.deep.equal(["subscription.created", "subscription.expired"]);
      expect(events[1]!.data).to.deep.equal(expired);
    });

    it("an overdue link reads as EXPIRED before anything expired it", async () => {
      const s = await createSubscription(api, plan.id, userId, { authorizationExpiresInMinutes: 5 });
      await advance(sys, 5 * 60);
      const rpc = subscriptionsRpc(sys);
      try {
        // The service's clock re-reads the shared offset every second.
        const view = await eventually(
          async () => {
            const v = await rpc.client.getAuthorization({ token: tokenOf(s.authorizationUrl) });
            return v.status === "EXPIRED" ? v : undefined;
          },
          5_000,
          "expired view",
        );
        expect(view.subscriptionStatus).to.equal("PENDING_APPROVAL");
        const page = await fetch(localUrl(sys, s.authorizationUrl));
        expect(page.status).to.equal(410);
      } finally {
        rpc.close();
      }
    });
  });

  describe("by the sweep", () => {
    let api: ApiClient;
    let plan: any;
    let rpc: ReturnType<typeof subscriptionsRpc>;

    const sys = useTestSystem();
    before(async () => {
      api = (await sys.createMerchant()).api;
      plan = await createPlan(api, { amount: "2" });
      rpc = subscriptionsRpc(sys);
    });
    after(async () => {
      rpc?.close();
    });

    it("expires on the service clock even when the delayed jobs are lost; approved ones are left alone", async () => {
      const user = await createWalletUser(sys, { USDT_TRON: "10" });
      const lost = await createSubscription(api, plan.id, user.id, { authorizationExpiresInMinutes: 5 });
      const approved = await createSubscription(api, plan.id, user.id, { authorizationExpiresInMinutes: 5 });
      const later = await createSubscription(api, plan.id, user.id, { authorizationExpiresInMinutes: 30 });
      await rpc.client.approveAuthorization({ token: tokenOf(approved.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" });

      // Redis lost every delayed job.
      await sys.system.queues!.queue("scheduler").drain(true);
      expect(await sys.system.queues!.queue("scheduler").getJob(expireAuthorizationKind.id({ subscriptionId: lost.subscriptionId }))).to.equal(undefined);

      await advance(sys, 6 * 60);
      await eventually(async () => ((await statusOf(api, lost.subscriptionId)).status === "EXPIRED" ? true : undefined), 10_000, "expiry by the sweep");
      expect((await statusOf(api, approved.subscriptionId)).status).to.equal("ACTIVE");
      expect((await statusOf(api, later.subscriptionId)).status).to.equal("PENDING_APPROVAL");

      // The page now says the link has expired (and so does the service).
      const page = await fetch(localUrl(sys, lost.authorizationUrl));
      expect(page.status).to.equal(410);
      expect(await page.text()).to.include("expired");
      expect((await rpc.client.getAuthorization({ token: tokenOf(later.authorizationUrl) })).status).to.equal("PENDING");
    });

    it("expiring twice is impossible: job, sweep and operator calls racing record one expiry", async () => {
      const user = await createWalletUser(sys);
      const s = await createSubscription(api, plan.id, user.id, { authorizationExpiresInMinutes: 5 });
      await advance(sys, 5 * 60 + 1);
      await sys.system.clock!.clock.sync();
      const ctx = () => sys.context();
      const results = await Promise.all([
        ...Array.from({ length: 6 }, () => expireAuthorization(ctx(), s.subscriptionId)),
        ...Array.from({ length: 3 }, () => rpc.client.expireAuthorizations({ subscriptionId: s.subscriptionId }).then((r) => r.expired === 1)),
        rpc.client.expireAuthorizations({}).then(() => false),
      ]);
      await eventually(async () => ((await statusOf(api, s.subscriptionId)).status === "EXPIRED" ? true : undefined), 5_000, "expired");
      expect(results.filter(Boolean).length).to.be.at.most(1);
      expect((await eventsOf(sys, s.subscriptionId)).filter((e) => e.type === "subscription.expired")).to.have.length(1);
      // And nothing brings it back: approving an expired authorization is refused.
      const err = await rpc.client
        .approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" })
        .catch((e) => e);
      expect(err.rawMessage).to.include("expired");
    });
  });
});

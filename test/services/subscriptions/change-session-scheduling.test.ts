import { expect } from "chai";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { RpcClients } from "../../../services/platform/rpc/clients.ts";
import { createLogger } from "../../../services/platform/logger.ts";
import { DomainError } from "../../../services/platform/errors.ts";
import { applyPlanChangeKind, changeSessionsSweep, expireChangeSessionKind } from "../../../services/subscriptions/change-sessions/change-session-queue.ts";
import { subscriptionsSweep } from "../../../services/subscriptions/subscription-queue.ts";
import { createChangeSession } from "../../../services/subscriptions/change-sessions/create-change-session.ts";
import { subscriptionPorts } from "../../../services/subscriptions/ports.ts";
import { handlersOf, type TestSystem, useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { createPlan, createWalletUser, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { eventually } from "../../support/eventually.ts";
import { advanceClock, approvedSubscription, changeEventTypes, changeOf, createChange, subscriptionOf } from "../../support/change-sessions.ts";
import { settle } from "../../support/sweeps.ts";
import { make } from "../../support/factories/index.ts";

const DAY = 86_400;

/**
 * Postgres is the source of truth for scheduled changes and expiries: the
 * delayed jobs only make them prompt. Each system here runs only the job
 * under test, so whatever happens, that job did it.
 */
describe("plan change scheduling: delayed jobs and sweeps", function () {
  this.timeout(60_000);

  async function arrange(sys: TestSystem, client: Client<typeof SubscriptionsService>, api: ApiClient) {
    const basic = await createPlan(api, { name: "Basic", amount: "10" });
    const pro = await createPlan(api, { name: "Pro", amount: "25" });
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const subscriptionId = await approvedSubscription(api, client, basic.id, user.id);
    return { basic, pro, user, subscriptionId };
  }

  describe("the delayed jobs alone", () => {
    let api: ApiClient;
    let rpc: ReturnType<typeof subscriptionsRpc>;
    const sys = useTestSystem({ jobs: handlersOf(applyPlanChangeKind, expireChangeSessionKind) });
    before(async () => {
      api = (await sys.createMerchant()).api;
      rpc = subscriptionsRpc(sys);
    });
    after(async () => {
      rpc?.close();
    });

    it("one apply job per scheduled change, due at the next billing date: early it does nothing, on time it applies once", async () => {
      const { pro, user, subscriptionId } = await arrange(sys, rpc.client, api);
      const sub = await subscriptionOf(api, subscriptionId);
      const change = await createChange(api, subscriptionId, pro.id);
      expect((await rpc.client.approveChangeSession({ token: tokenOf(change.approvalUrl), walletUserId: user.id })).approved).to.equal(true);
      const queue = sys.system.queues!.queue("scheduler");
      const job = await queue.getJob(applyPlanChangeKind.id({ changeSessionId: change.id }));
      expect(job, "delayed job").to.not.equal(undefined);
      expect(await job!.getState()).to.equal("delayed");
      const expectedDelay = Date.parse(sub.nextBillingAt) - Date.now();
      expect(job!.opts.delay).to.be.within(expectedDelay - 60_000, expectedDelay + 1_000);

      await job!.promote();
      await eventually(async () => ((await job!.getState()) === "completed" ? true : undefined), 5_000, "early job to complete");
      expect((await changeOf(api, subscriptionId, change.id)).status).to.equal("SCHEDULED");

      await advanceClock(sys, 31 * DAY);
      await sys.system
        .queues!.queue("scheduler")
        .add(applyPlanChangeKind.name, { changeSessionId: change.id }, { jobId: `${applyPlanChangeKind.id({ changeSessionId: change.id })}-retry` });
      await eventually(async () => ((await changeOf(api, subscriptionId, change.id)).status === "APPLIED" ? true : undefined), 5_000, "apply by the job");
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(pro.id);
      // Once more: nothing (no second event).
      const againId = `${applyPlanChangeKind.id({ changeSessionId: change.id })}-again`;
      await sys.system.queues!.queue("scheduler").add(applyPlanChangeKind.name, { changeSessionId: change.id }, { jobId: againId });
      await eventually(async () => ((await queue.getJob(againId))?.finishedOn !== undefined ? true : undefined), 5_000, "the second job to finish");
      expect(await (await queue.getJob(againId))!.getState()).to.equal("completed");
      const types = await changeEventTypes(sys, change.id);
      expect(types.filter((t) => t === "subscription.plan_changed")).to.have.length(1);
    });

    it("one expiry job per session, due at expiresAt", async () => {
      const { pro, subscriptionId } = await arrange(sys, rpc.client, api);
      const change = await createChange(api, subscriptionId, pro.id);
      const job = await sys.system.queues!.queue("scheduler").getJob(expireChangeSessionKind.id({ changeSessionId: change.id }));
      expect(job!.opts.delay).to.be.within(59 * 60_000, 60 * 60_000);
      await advanceClock(sys, 61 * 60);
      await job!.promote();
      await eventually(async () => ((await changeOf(api, subscriptionId, change.id)).status === "EXPIRED" ? true : undefined), 5_000, "expiry by the job");
    });
  });

  describe("the sweep alone (the delayed jobs lost)", () => {
    let api: ApiClient;
    let rpc: ReturnType<typeof subscriptionsRpc>;
    const sys = useTestSystem({ jobs: handlersOf(changeSessionsSweep, subscriptionsSweep) });
    before(async () => {
      api = (await sys.createMerchant()).api;
      rpc = subscriptionsRpc(sys);
    });
    after(async () => {
      rpc?.close();
    });

    it("a scheduled change whose job vanished from Redis is still applied once its billing date passes on the service clock", async () => {
      const { pro, user, subscriptionId } = await arrange(sys, rpc.client, api);
      const change = await createChange(api, subscriptionId, pro.id);
      expect((await rpc.client.approveChangeSession({ token: tokenOf(change.approvalUrl), walletUserId: user.id })).approved).to.equal(true);
      const queue = sys.system.queues!.queue("scheduler");
      await queue.remove(applyPlanChangeKind.id({ changeSessionId: change.id }));
      await queue.remove(expireChangeSessionKind.id({ changeSessionId: change.id }));
      expect(await queue.getJob(applyPlanChangeKind.id({ changeSessionId: change.id }))).to.equal(undefined);

      // The sweeps run (and whatever they queue): not due yet.
      await settle(sys, { sweeps: [changeSessionsSweep, subscriptionsSweep], groups: ["scheduler"] });
      expect((await changeOf(api, subscriptionId, change.id)).status).to.equal("SCHEDULED");
      await advanceClock(sys, 31 * DAY);
      await eventually(async () => ((await changeOf(api, subscriptionId, change.id)).status === "APPLIED" ? true : undefined), 10_000, "apply by the sweep");
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(pro.id);
    });

    it("sessions whose expiry job vanished are expired by the sweep", async () => {
      const { pro, subscriptionId } = await arrange(sys, rpc.client, api);
      const change = await createChange(api, subscriptionId, pro.id);
      await sys.system.queues!.queue("scheduler").remove(expireChangeSessionKind.id({ changeSessionId: change.id }));
      await advanceClock(sys, 61 * 60);
      await eventually(async () => ((await changeOf(api, subscriptionId, change.id)).status === "EXPIRED" ? true : undefined), 10_000, "expiry by the sweep");
    });

    it("an immediate charge left in flight by a crash is finished by the sweep with the same key, and the change applies", async () => {
      const { pro, user, subscriptionId } = await arrange(sys, rpc.client, api);
      const change = await createChange(api, subscriptionId, pro.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "4" });
      // A crash right after step 1: the PENDING row is committed, the wallet was never called, the lease ran out.
      await make.charge(sys, { subscriptionId, purpose: "PLAN_CHANGE", changeSessionId: change.id, leaseSeconds: -1 });
      await eventually(async () => ((await changeOf(api, subscriptionId, change.id)).status === "APPLIED" ? true : undefined), 10_000, "settle by the sweep");
      expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(pro.id);
      const { balances } = await import("../../support/subscriptions.ts");
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("86");
    });
  });

  describe("currency the funding asset cannot pay", () => {
    let api: ApiClient;
    let rpc: ReturnType<typeof subscriptionsRpc>;
    const sys = useTestSystem({ jobs: [] });
    before(async () => {
      api = (await sys.createMerchant()).api;
      rpc = subscriptionsRpc(sys);
    });
    after(async () => {
      rpc?.close();
    });

    it("409 CURRENCY_NOT_PAYABLE when the wallet cannot quote the requested plan's currency in the funding asset", async () => {
      // The sandbox rate table converts every pair, so the one condition (a rate feed without a pair) is
      // simulated in front of the real wallet: everything else is the real service over real gRPC and Postgres.
      const { pro, subscriptionId } = await arrange(sys, rpc.client, api);
      const merchantId = (await sys.sql("select merchant_id from subscriptions where id = ?", [subscriptionId]))[0].merchant_id;
      const euro = await createPlan(api, { name: "Euro", amount: "9", currency: "EUR" });
      const clients = new RpcClients(sys.config.internalApiToken);
      try {
        const real = subscriptionPorts({ rpc: clients, config: sys.config, queues: sys.system.queues!, logger: createLogger("silent") });
        const noEuroRate = new Proxy(real.wallet, {
          get(target, prop, receiver) {
            if (prop !== "quote") return Reflect.get(target, prop, receiver);
            return async (req: { currency: string }, opts?: unknown) => {
              if (req.currency === "EUR") throw new ConnectError("no rate for EUR", Code.FailedPrecondition);
              return (target.quote as any)(req, opts);
            };
          },
        });
        const input = { merchantId, subscriptionId, successUrl: "https://m.example/ok", cancelUrl: "https://m.example/no", metadata: {} };
        const err = await createChangeSession(sys.context(), { ...real, wallet: noEuroRate }, { ...input, requestedPlanId: euro.id }).catch((e: unknown) => e);
        expect(err).to.be.instanceOf(DomainError);
        expect(err).to.include({ code: "CURRENCY_NOT_PAYABLE" });
        expect((err as Error).message).to.include("EUR");
        const ok = await createChangeSession(sys.context(), { ...real, wallet: noEuroRate }, { ...input, requestedPlanId: pro.id });
        expect(ok.session.status).to.equal("PENDING_APPROVAL");
      } finally {
        clients.close();
      }
    });
  });
});

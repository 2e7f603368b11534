import { expect } from "chai";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { RpcClients } from "../../../services/platform/rpc/clients.ts";
import { createLogger } from "../../../services/platform/logger.ts";
import { startSystem, type RunningSystem } from "../../../cli/system.ts";
import { renewSubscription } from "../../../services/subscriptions/renewals/renew-subscription.ts";
import { renewSubscriptionKind } from "../../../services/subscriptions/renewals/renewal-queue.ts";
import { startTestSystem, type TestSystem, useTestSystem } from "../../support/system.ts";
import { balances, createWalletUser, eventsOf, subscriptionsRpc } from "../../support/subscriptions.ts";
import {
  advanceBy,
  advanceTo,
  approvedSubscription,
  chargesOf,
  DAY,
  debitsOf,
  portsFor,
  subscriptionOf,
  waitForCharges,
  waitForQuiet,
} from "../../support/billing.ts";
import { make } from "../../support/factories/index.ts";

describe("recurring billing: exactly one charge per period", () => {
  describe("the use case raced against itself (no workers running)", () => {
    let rpc: ReturnType<typeof subscriptionsRpc>;
    let wired: ReturnType<typeof portsFor>;

    const sys = useTestSystem({ workerGroups: [] });
    before(async () => {
      rpc = subscriptionsRpc(sys);
      wired = portsFor(sys);
    });
    after(async () => {
      wired?.close();
      rpc?.close();
    });

    it("eight concurrent runs on one subscription with three periods due: three charges, each debited once", async () => {
      const { api } = await sys.createMerchant();
      const { subscriptionId, user } = await approvedSubscription(sys, api, rpc.client, {
        plan: { amount: "7", interval: "MONTH" },
        credits: { USDT_TRON: "100" },
      });
      const active = await subscriptionOf(api, subscriptionId);
      await advanceTo(sys, new Date(Date.parse(active.billingAnchor) + 95 * DAY * 1000)); // months 1, 2 and 3 are due

      const runs = await Promise.all(Array.from({ length: 8 }, () => renewSubscription(sys.context(), wired.ports, { subscriptionId })));
      expect(runs.reduce((n, r) => n + r.paid, 0)).to.equal(3);
      expect(runs.reduce((n, r) => n + r.failed, 0)).to.equal(0);
      const charges = await chargesOf(sys, subscriptionId);
      expect(charges.map((c) => [c.period_index, c.attempt, c.status])).to.deep.equal([
        [0, 1, "SUCCEEDED"],
        [1, 1, "SUCCEEDED"],
        [2, 1, "SUCCEEDED"],
        [3, 1, "SUCCEEDED"],
      ]);
      expect(await debitsOf(sys, subscriptionId)).to.equal(4);
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("72");
      expect((await eventsOf(sys, subscriptionId)).filter((e) => e.type === "subscription.renewed")).to.have.length(3);

      // The same job again (a redelivered job): nothing is due, nothing moves.
      const again = await renewSubscription(sys.context(), wired.ports, { subscriptionId });
      expect(again).to.deep.equal({ paid: 0, failed: 0, stoppedBecause: "not_due" });
      expect(await debitsOf(sys, subscriptionId)).to.equal(4);
    });

    it("a charge left PENDING after the wallet debited it is finished with the same key by the next run: no second debit", async () => {
      const { api, id: merchantId } = await sys.createMerchant();
      const { subscriptionId, user } = await approvedSubscription(sys, api, rpc.client, {
        plan: { amount: "4", interval: "DAY" },
        credits: { USDT_TRON: "10" },
      });
      const active = await subscriptionOf(api, subscriptionId);
      await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
      // What a worker killed between the debit and the settle leaves: the PENDING row (lease run out) and the wallet's transaction.
      const { id: chargeId } = await make.charge(sys, { subscriptionId, leaseSeconds: -1 });
      const clients = new RpcClients(sys.config.internalApiToken);
      try {
        await clients.client(WalletService, sys.config.serviceUrls.wallet).charge({
          idempotencyKey: `subscription-charge-${chargeId}`,
          walletUserId: user.id,
          merchantId,
          asset: "USDT_TRON",
          amount: "4",
          description: "debited, then the worker died",
        });
      } finally {
        clients.close();
      }
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("2");

      const run = await renewSubscription(sys.context(), wired.ports, { subscriptionId });
      expect(run).to.include({ paid: 1, stoppedBecause: "not_due" });
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("2");
      expect(await debitsOf(sys, subscriptionId)).to.equal(2);
      const after = await subscriptionOf(api, subscriptionId);
      expect(after).to.include({ status: "ACTIVE", currentPeriodStart: active.nextBillingAt });
      expect((await chargesOf(sys, subscriptionId)).map((c) => [c.id === chargeId, c.status])).to.deep.equal([
        [false, "SUCCEEDED"],
        [true, "SUCCEEDED"],
      ]);
    });
  });

  describe("a renewal worker process SIGKILLed after the debit, before the settle", () => {
    let rpc: ReturnType<typeof subscriptionsRpc>;

    // Only the scheduler group runs here (its sweep finishes stale charges); the child process is the only renewer.
    const sys = useTestSystem({ workerGroups: ["scheduler"] });
    before(async () => {
      rpc = subscriptionsRpc(sys);
    });
    after(async () => {
      rpc?.close();
    });

    it("the stale-charge sweep finishes its charge with the same key: the customer is debited once and the period advances", async () => {
      const { api } = await sys.createMerchant();
      const { subscriptionId, user } = await approvedSubscription(sys, api, rpc.client, {
        plan: { amount: "6", interval: "WEEK" },
        credits: { USDT_TRON: "20" },
      });
      const active = await subscriptionOf(api, subscriptionId);
      await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));

      const child = spawn(process.execPath, [fileURLToPath(new URL("./fixtures/renew-then-hang.ts", import.meta.url)), subscriptionId], {
        env: {
          ...process.env,
          DATABASE_URL: sys.config.databaseUrl,
          REDIS_URL: sys.config.redisUrl,
          QUEUE_PREFIX: sys.config.queuePrefix,
          INTERNAL_API_TOKEN: sys.config.internalApiToken,
          WALLET_SERVICE_URL: sys.config.serviceUrls.wallet,
          CATALOG_SERVICE_URL: sys.config.serviceUrls.catalog,
          MERCHANTS_SERVICE_URL: sys.config.serviceUrls.merchants,
          SANDBOX: "true",
          LOG_LEVEL: "silent",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const key = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (d) => {
          out += d;
          const m = /DEBITED (\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on("exit", (code) => reject(new Error(`child exited (${code}) before the debit: ${out} ${stderr}`)));
      });
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));

      const chargeId = key.replace("subscription-charge-", "");
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("8"); // 20 − 6 − 6: debited, not settled
      const [left] = await sys.sql("select status, period_index from subscription_charges where id = ?", [chargeId]);
      expect(left).to.deep.equal({ status: "PENDING", period_index: 1 });
      // Time passes: the dead worker's lease (30 s) runs out.
      await sys.sql("update subscription_charges set lease_until = now() - interval '1 second' where id = ?", [chargeId]);

      const charges = await waitForCharges(sys, subscriptionId, 2);
      expect(charges.map((c) => [c.period_index, c.status])).to.deep.equal([
        [0, "SUCCEEDED"],
        [1, "SUCCEEDED"],
      ]);
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("8");
      expect(await debitsOf(sys, subscriptionId)).to.equal(2);
      const after = await subscriptionOf(api, subscriptionId);
      expect(after).to.include({ status: "ACTIVE", currentPeriodStart: active.nextBillingAt });
      expect((await eventsOf(sys, subscriptionId)).filter((e) => e.type === "subscription.renewed")).to.have.length(1);
    });
  });

  describe("two worker processes and duplicated jobs on the same subscriptions", () => {
    let sys: TestSystem;
    let second: RunningSystem | undefined;
    let rpc: ReturnType<typeof subscriptionsRpc>;

    before(async () => {
      sys = await startTestSystem();
      // A second workers-only process on the same database and queues, calling the first one's services.
      second = await startSystem(sys.config, createLogger("silent"), { services: [], gateway: false, workerGroups: ["renewals"] });
      rpc = subscriptionsRpc(sys);
    });
    after(async () => {
      rpc?.close();
      await second?.close();
      await sys?.close();
    });

    it("each period of each subscription is charged once", async () => {
      const { api } = await sys.createMerchant();
      const user = await createWalletUser(sys, { USDT_TRON: "1000" });
      const subs: string[] = [];
      for (let i = 0; i < 12; i++)
        subs.push((await approvedSubscription(sys, api, rpc.client, { plan: { amount: "2", interval: "DAY" }, user })).subscriptionId);
      await advanceBy(sys, 5 * DAY + 60); // five periods due for each
      // Besides the sweeps' jobs, extra jobs under other ids: both processes work on the same subscriptions at once.
      for (const id of subs) {
        for (let k = 0; k < 3; k++) await sys.system.queues!.add(renewSubscriptionKind, { subscriptionId: id, periodIndex: 1000 + k, attempt: 0 });
      }
      await waitForQuiet(sys);
      for (const id of subs) {
        const charges = await chargesOf(sys, id);
        expect(charges.map((c) => [c.period_index, c.status])).to.deep.equal([0, 1, 2, 3, 4, 5].map((n) => [n, "SUCCEEDED"]));
        expect(await debitsOf(sys, id)).to.equal(6);
      }
      expect((await balances(sys, user.id)).USDT_TRON).to.equal(String(1000 - 12 * 6 * 2));
      const check = await sys.admin.get("/admin/v1/ledger/check");
      expect(check.body.ok, JSON.stringify(check.body)).to.equal(true);
    });
  });
});

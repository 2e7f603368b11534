import { expect } from "chai";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { useTestSystem } from "../../support/system.ts";
import { balances, createPlan, eventsOf, subscriptionsRpc } from "../../support/subscriptions.ts";
import { advanceBy, advanceTo, approvedSubscription, chargesOf, DAY, debitUnderChargeKey, subscriptionOf } from "../../support/billing.ts";
import { eventually } from "../../support/eventually.ts";
import { make } from "../../support/factories/index.ts";

/** Pause and resume around a renewal charge in flight, and resume reading the plan under the lock (issue 15). */
describe("pause and resume: charges in flight and the plan under the lock", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;

  // No workers: nothing settles unless the use case under test does it.
  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  /** What a renewal worker that died after the debit leaves: a PENDING row (lease run out) whose key already moved money. */
  async function renewalDebitedNotSettled(subscriptionId: string, walletUserId: string, merchantId: string, amount: string): Promise<string> {
    const { id: chargeId } = await make.charge(sys, { subscriptionId, amount, leaseSeconds: -1, leaseGeneration: 1 });
    await debitUnderChargeKey(sys, chargeId, { walletUserId, merchantId, amount, description: "debited, then the worker died" });
    return chargeId;
  }

  for (const action of ["pause", "resume"] as const) {
    it(`${action} settles a renewal charge in flight first: its money comes with subscription.renewed, then the ${action}`, async () => {
      const { api, id: merchantId } = await sys.createMerchant();
      const { subscriptionId, user } = await approvedSubscription(sys, api, rpc.client, {
        plan: { amount: "4", interval: "DAY" },
        credits: { USDT_TRON: "10" },
      });
      const active = await subscriptionOf(api, subscriptionId);
      if (action === "resume") expect((await api.post(`/api/v1/subscriptions/${subscriptionId}/pause`, {})).status).to.equal(200);
      await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
      const chargeId = await renewalDebitedNotSettled(subscriptionId, user.id, merchantId, "4");
      if (action === "resume") {
        // A paused subscription's in-flight renewal (started just before the pause) is the same case.
        await sys.sql("update subscriptions set status = 'PAUSED' where id = ?", [subscriptionId]);
      }

      const res = await api.post(`/api/v1/subscriptions/${subscriptionId}/${action}`, {});
      expect(res.status, res.text).to.equal(200);
      const charge = (await chargesOf(sys, subscriptionId)).find((c) => c.id === chargeId)!;
      expect(charge.status).to.equal("SUCCEEDED");
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("2");
      if (action === "pause") {
        expect(res.body.status).to.equal("PAUSED");
        const types = (await eventsOf(sys, subscriptionId)).map((e) => e.type);
        expect(types.filter((t) => t === "subscription.renewed")).to.have.length(1);
        expect(types.indexOf("subscription.renewed")).to.be.lessThan(types.lastIndexOf("subscription.paused"));
      }
    });
  }

  it("resume counts skipped periods with the plan the subscription has under the lock, not the one read before", async () => {
    const { api } = await sys.createMerchant();
    const weekly = await createPlan(api, { amount: "2", interval: "WEEK" });
    const { subscriptionId } = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "2", interval: "DAY" }, credits: { USDT_TRON: "50" } });
    expect((await api.post(`/api/v1/subscriptions/${subscriptionId}/pause`, {})).status).to.equal(200);
    await advanceBy(sys, 10 * DAY);

    // Hold the subscription's row lock, as a plan change being applied would.
    const holder = new pg.Client({ connectionString: sys.config.databaseUrl });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("select id from subscriptions where id = $1 for update", [subscriptionId]);
      const resumed = api.post(`/api/v1/subscriptions/${subscriptionId}/resume`, {});
      // The resume has read the (daily) plan and now waits for the lock.
      await eventually(
        async () => {
          const { rows } = await holder.query(
            "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()",
          );
          return rows[0].n > 0;
        },
        10_000,
        async () =>
          `the resume to wait for the lock (it answered ${JSON.stringify((await Promise.race([resumed, sleep(10).then(() => ({ text: "pending" }))])).text)})`,
        20,
      );
      // An IMMEDIATE change to the weekly plan commits while the resume waits.
      await holder.query("update subscriptions set plan_id = $1 where id = $2", [weekly.id, subscriptionId]);
      await holder.query("commit");
      const res = await resumed;
      expect(res.status, res.text).to.equal(200);
      const sub = await subscriptionOf(api, subscriptionId);
      const sinceAnchor = (Date.parse(sub.nextBillingAt) - Date.parse(sub.billingAnchor)) / 1000;
      expect(sinceAnchor % (7 * DAY), "next billing on the weekly cadence").to.equal(0);
      expect(sinceAnchor).to.equal(14 * DAY);
    } finally {
      await holder.query("rollback").catch(() => {});
      await holder.end();
    }
  });
});

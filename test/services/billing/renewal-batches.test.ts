import { expect } from "chai";
import pg from "pg";
import { setTimeout as sleep } from "node:timers/promises";
import { WALLET_CALL_TIMEOUT_MS } from "../../../services/platform/wallet-calls/wallet-call.ts";
import { renewBatch } from "../../../services/subscriptions/renewals/renew-batch.ts";
import { useTestSystem } from "../../support/system.ts";
import { balances, createWalletUser, eventsOf, subscriptionsRpc } from "../../support/subscriptions.ts";
import { advanceTo, approvedSubscription, chargesOf, DAY, debitsOf, portsFor, subscriptionOf } from "../../support/billing.ts";
import { make } from "../../support/factories/index.ts";

/** The renewal engine's sets (renew-batch.ts): the same outcomes as renewing one by one, each period charged once. */
describe("recurring billing: renewals in sets", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let wired: ReturnType<typeof portsFor>;

  // A statement bound well above the 3.5 s lock hold of the ChargeBatch test below (the default 5 s left it 1.5 s on a loaded machine).
  const sys = useTestSystem({ workerGroups: [], env: { DB_STATEMENT_TIMEOUT_MS: "20000" } });
  before(async () => {
    rpc = subscriptionsRpc(sys);
    wired = portsFor(sys);
  });
  after(async () => {
    wired?.close();
    rpc?.close();
  });

  it("four concurrent runs over overlapping sets, three months due each: every period charged and debited once, in order", async () => {
    const { api } = await sys.createMerchant();
    const users = [await createWalletUser(sys, { USDT_TRON: "100" }), await createWalletUser(sys, { USDT_TRON: "100" })];
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push((await approvedSubscription(sys, api, rpc.client, { plan: { amount: "5", interval: "MONTH" }, user: users[i % 2]! })).subscriptionId);
    }
    const first = await subscriptionOf(api, ids[0]!);
    await advanceTo(sys, new Date(Date.parse(first.billingAnchor) + 95 * DAY * 1000));

    const runs = await Promise.all([ids, ids.slice(0, 4), ids.slice(2), [...ids].reverse()].map((set) => renewBatch(sys.context(), wired.ports, set)));
    expect(runs.reduce((n, r) => n + r.paid, 0)).to.equal(18);
    expect(runs.reduce((n, r) => n + r.failed, 0)).to.equal(0);
    for (const id of ids) {
      expect((await chargesOf(sys, id)).map((c) => [c.period_index, c.status])).to.deep.equal([
        [0, "SUCCEEDED"],
        [1, "SUCCEEDED"],
        [2, "SUCCEEDED"],
        [3, "SUCCEEDED"],
      ]);
      expect(await debitsOf(sys, id)).to.equal(4);
      expect((await eventsOf(sys, id)).filter((e) => e.type === "subscription.renewed")).to.have.length(3);
      expect(await subscriptionOf(api, id)).to.include({ status: "ACTIVE" });
    }
    // Each user pays 3 subscriptions × 4 periods × 5.
    for (const u of users) expect((await balances(sys, u.id)).USDT_TRON).to.equal("40");
    const check = await sys.admin.get("/admin/v1/ledger/check");
    expect(check.body.ok, JSON.stringify(check.body.problems)).to.equal(true);

    // The same set again (a redelivered job): nothing is due, nothing moves.
    expect(await renewBatch(sys.context(), wired.ports, ids)).to.deep.equal({ paid: 0, failed: 0, oneByOne: 0, errored: 0 });
  });

  it("a mixed set: paid, short of funds (PAST_DUE), a charge already in flight and one over its cap go one by one, a paused one is left alone", async () => {
    const { api } = await sys.createMerchant();
    const plan = { amount: "4", interval: "DAY" };
    const paid = await approvedSubscription(sys, api, rpc.client, { plan, credits: { USDT_TRON: "8" } });
    const short = await approvedSubscription(sys, api, rpc.client, { plan, credits: { USDT_TRON: "5" } });
    const inFlight = await approvedSubscription(sys, api, rpc.client, { plan, credits: { USDT_TRON: "8" } });
    const capped = await approvedSubscription(sys, api, rpc.client, { plan: { ...plan, maximumChargeAmount: "5" }, credits: { USDT_TRON: "8" } });
    const paused = await approvedSubscription(sys, api, rpc.client, { plan, credits: { USDT_TRON: "8" } });
    expect((await api.post(`/api/v1/subscriptions/${paused.subscriptionId}/pause`, {})).status).to.equal(200);
    // Plans cannot be created with a cap under their amount; prices are immutable (a trigger): lift it for this arranged row.
    await sys.sql("alter table plans disable trigger plans_price_is_immutable");
    await sys.sql("update plans set maximum_charge_amount = 3 where id = ?", [capped.plan.id]);
    await sys.sql("alter table plans enable trigger plans_price_is_immutable");
    const active = await subscriptionOf(api, paid.subscriptionId);
    await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
    // What a worker killed mid-charge leaves: a PENDING row of the due period whose lease ran out.
    const { id: pendingId } = await make.charge(sys, { subscriptionId: inFlight.subscriptionId, leaseSeconds: -1 });

    const ids = [paid, short, inFlight, capped, paused].map((s) => s.subscriptionId);
    const run = await renewBatch(sys.context(), wired.ports, ids);
    expect(run).to.include({ paid: 2, failed: 2, oneByOne: 2 });

    expect(await subscriptionOf(api, paid.subscriptionId)).to.include({ status: "ACTIVE" });
    expect((await balances(sys, paid.user.id)).USDT_TRON).to.equal("0");
    expect(await subscriptionOf(api, short.subscriptionId)).to.include({ status: "PAST_DUE" });
    expect((await chargesOf(sys, short.subscriptionId)).map((c) => [c.period_index, c.status, c.failure_reason])).to.deep.equal([
      [0, "SUCCEEDED", null],
      [1, "FAILED", "INSUFFICIENT_FUNDS"],
    ]);
    expect((await eventsOf(sys, short.subscriptionId)).map((e) => e.type)).to.include.members(["subscription.charge_failed", "subscription.past_due"]);
    // The in-flight row is finished under its own key: one debit for the period, no second row.
    expect((await chargesOf(sys, inFlight.subscriptionId)).map((c) => [c.id === pendingId, c.status])).to.deep.equal([
      [false, "SUCCEEDED"],
      [true, "SUCCEEDED"],
    ]);
    expect(await debitsOf(sys, inFlight.subscriptionId)).to.equal(2);
    expect((await chargesOf(sys, capped.subscriptionId)).at(-1)).to.include({ status: "FAILED", failure_reason: "MAXIMUM_CHARGE_EXCEEDED" });
    expect(await chargesOf(sys, paused.subscriptionId)).to.have.length(1);
    expect(await subscriptionOf(api, paused.subscriptionId)).to.include({ status: "PAUSED" });
    expect((await eventsOf(sys, paid.subscriptionId)).filter((e) => e.type === "subscription.charge_succeeded")).to.have.length(2);
    const check = await sys.admin.get("/admin/v1/ledger/check");
    expect(check.body.ok, JSON.stringify(check.body.problems)).to.equal(true);
  });
  it("re-anchors a subscription whose anchor no longer lands on its billing date (a record change: version + 1), then charges from there", async () => {
    const { api } = await sys.createMerchant();
    const { subscriptionId } = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "3", interval: "MONTH" }, credits: { USDT_TRON: "10" } });
    // An anchor moved without its period index (as an old plan change could leave it).
    await sys.sql("update subscriptions set billing_anchor = billing_anchor - interval '3 days' where id = ?", [subscriptionId]);
    const before = await subscriptionOf(api, subscriptionId);
    await advanceTo(sys, new Date(Date.parse(before.nextBillingAt) + 60_000));

    expect(await renewBatch(sys.context(), wired.ports, [subscriptionId])).to.include({ paid: 1, oneByOne: 0 });
    const after = await subscriptionOf(api, subscriptionId);
    expect(after.billingAnchor).to.equal(before.nextBillingAt);
    expect(after.currentPeriodStart).to.equal(before.nextBillingAt);
    // One change for the re-anchor, one for the renewal.
    expect(after.version).to.equal(before.version + 2);
    const [row] = await sys.sql<{ anchor_period_index: number }>("select anchor_period_index from subscriptions where id = ?", [subscriptionId]);
    expect(row!.anchor_period_index).to.equal(1);
  });
  it("a set whose ChargeBatch waits longer than a single charge's deadline (a payer's account locked) is still charged and settled as a set", async () => {
    const { api } = await sys.createMerchant();
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await approvedSubscription(sys, api, rpc.client, { plan: { amount: "5", interval: "MONTH" }, user })).subscriptionId);
    const first = await subscriptionOf(api, ids[0]!);
    await advanceTo(sys, new Date(Date.parse(first.nextBillingAt) + 60_000));

    // Another transaction holds the payer's account (as a batch of other subscriptions of this payer would).
    const holder = new pg.Client({ connectionString: sys.database.url });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("select id from ledger_accounts where owner_type = 'WALLET_USER' and owner_id = $1 for update", [user.id]);
      let ended = false;
      const run = renewBatch(sys.context(), wired.ports, ids).finally(() => (ended = true));
      run.catch(() => {}); // awaited below; a failure before then is reported there, not as an unhandled rejection
      // The batch's wallet transaction waits on the account, then stays stuck past a single call's 3 s deadline.
      for (let waiting = false; !waiting; await sleep(20)) {
        if (ended) expect.fail(`the set ended before its wallet call waited on the account: ${JSON.stringify(await run)}`);
        // Read outside the holder's transaction: pg_stat_activity is a snapshot for the rest of a transaction.
        const [row] = await sys.sql<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%ledger_accounts%'",
        );
        waiting = row!.n > 0;
      }
      await sleep(WALLET_CALL_TIMEOUT_MS + 500);
      await holder.query("rollback");
      expect(await run).to.deep.equal({ paid: 3, failed: 0, oneByOne: 0, errored: 0 });
    } finally {
      await holder.end();
    }
    // Charged by the set's own call: no failure counted, no lease taken over by the sweep.
    const charges = await sys.sql<{ status: string; settle_failures: number; lease_generation: number }>(
      "select status, settle_failures, lease_generation from subscription_charges where subscription_id = any(?::uuid[]) and period_index = 1",
      [`{${ids.join(",")}}`],
    );
    expect(charges).to.deep.equal(ids.map(() => ({ status: "SUCCEEDED", settle_failures: 0, lease_generation: 1 })));
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("70");
  });
});

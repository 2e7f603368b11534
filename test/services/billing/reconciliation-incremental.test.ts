import { expect } from "chai";
import pg from "pg";
import { createLogger } from "../../../services/platform/logger.ts";
import { reconcile } from "../../../services/reconciliation/reconcile.ts";
import { fullPassDue, startRun, windowStart } from "../../../services/reconciliation/reconciliation-window-store.ts";
import { useTestSystem } from "../../support/system.ts";
import { reconciliationArrangements } from "../../support/reconciliation.ts";
import { subscriptionsRpc } from "../../support/subscriptions.ts";
import { advanceBy, approvedSubscription } from "../../support/billing.ts";
import { make } from "../../support/factories/index.ts";

const TWO_HOURS = 7200;

/**
 * Incremental reconciliation (services/reconciliation/reconciliation-window-store.ts):
 * what the endpoint checks every few minutes without reading all history, and
 * what keeps it from missing a row that changes after its window.
 */
describe("reconciliation, incremental (since the last runs)", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;
  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  const { chargeRow, walletCharge, lastPeriod } = reconciliationArrangements(sys);

  /** As if the last run, an hour ago, had left the next window starting `secondsAgo` back (or at a charge then in flight, if older). */
  async function windowFrom(secondsAgo: number): Promise<void> {
    await sys.sql("delete from reconciliation_runs");
    await sys.sql(
      `insert into reconciliation_runs (id, scope, since, started_at, service_started_at, next_since, finished_at, checked, anomalies)
       values (gen_random_uuid(), 'FULL', null, now() - interval '1 hour', now() - interval '1 hour',
               least(now() - make_interval(secs => ?), (select min(c.created_at) from subscription_charges c where c.status = 'PENDING'
                     and not exists (select 1 from reconciliation_anomalies a where a.owner_id = c.id::text))),
               now(), 0, 0)`,
      [secondsAgo],
    );
  }

  /** Ledger rows are immutable (a trigger refuses updates): an arrangement moves one back in time with triggers off. */
  async function backdateMoney(key: string, seconds: number): Promise<void> {
    const client = new pg.Client({ connectionString: sys.database.url });
    await client.connect();
    try {
      await client.query("begin");
      await client.query("set local session_replication_role = replica");
      await client.query("update ledger_transactions set created_at = created_at - make_interval(secs => $1) where idempotency_key = $2", [seconds, key]);
      await client.query("commit");
    } finally {
      await client.end();
    }
  }

  const found = (body: any) => body.anomalies.map((a: any) => [a.kind, a.ownerId]);

  it("checks money made now for a charge from before its window, keeps listing every anomaly recorded before, and leaves older settled rows to the full pass", async () => {
    const { api, id: merchantId } = await sys.createMerchant();
    const { subscriptionId, user } = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "3", interval: "DAY" }, credits: { USDT_TRON: "50" } });
    // Two hours old, settled: outside a window that starts an hour ago.
    const oldWithoutMoney = await chargeRow(subscriptionId, "SUCCEEDED", "4", { createdSecondsAgo: TWO_HOURS });
    const oldFailed = await chargeRow(subscriptionId, "FAILED", "3", { createdSecondsAgo: TWO_HOURS });
    await walletCharge(oldFailed, user.id, merchantId, "3"); // money now, for the old FAILED charge
    await windowFrom(3600);

    const full = await sys.sql<{ n: number }>(
      "select (select count(*) from ledger_transactions) + (select count(*) from subscription_charges where status = 'SUCCEEDED') as n",
    );
    const res = await sys.admin.get("/admin/v1/reconciliation");
    expect(res.status).to.equal(200);
    expect(found(res.body)).to.deep.equal([["MONEY_WITHOUT_SUCCEEDED_OWNER", oldFailed]]);
    expect(res.body.checked).to.be.below(Number(full[0]!.n));

    // The full pass reads all history: it finds the old one too and records it.
    const pass = await reconcile(sys.context(), createLogger("silent"), { scope: "FULL", overlapMs: 600_000, fullTimeoutMs: 60_000 });
    expect(pass.since).to.equal(null);
    expect(pass.anomalies.map((a) => [a.kind, a.ownerId])).to.have.deep.members([
      ["MONEY_WITHOUT_SUCCEEDED_OWNER", oldFailed],
      ["SUCCEEDED_OWNER_WITHOUT_MONEY", oldWithoutMoney],
    ]);

    // Recorded, it stays in every incremental answer while it lasts, and leaves it once mended.
    await windowFrom(60);
    const again = await sys.admin.get("/admin/v1/reconciliation");
    expect(found(again.body)).to.have.deep.members([
      ["MONEY_WITHOUT_SUCCEEDED_OWNER", oldFailed],
      ["SUCCEEDED_OWNER_WITHOUT_MONEY", oldWithoutMoney],
    ]);
    await sys.sql("update subscription_charges set status = 'SUCCEEDED', failure_reason = null where id = ?", [oldFailed]);
    await sys.sql("update subscriptions set next_period_index = greatest(next_period_index, ?) where id = ?", [lastPeriod() + 1, subscriptionId]);
    await sys.sql("update subscription_charges set asset_amount_refunded = 0, status = 'FAILED', failure_reason = 'INSUFFICIENT_FUNDS' where id = ?", [
      oldWithoutMoney,
    ]);
    const mended = await sys.admin.get("/admin/v1/reconciliation");
    expect(mended.body).to.include({ status: "ok" });
  });

  it("judges a charge that was in flight during a run once it settles, however old it is", async () => {
    const { api } = await sys.createMerchant();
    const { subscriptionId } = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "3", interval: "DAY" }, credits: { USDT_TRON: "50" } });
    const inFlight = await chargeRow(subscriptionId, "PENDING", "2", { createdSecondsAgo: TWO_HOURS });
    // Its lease still runs (a call in flight), so it is not a stale row either.
    await sys.sql("update subscription_charges set lease_until = now() + interval '5 minutes' where id = ?", [inFlight]);
    await windowFrom(3600);

    const first = await sys.admin.get("/admin/v1/reconciliation");
    expect(found(first.body).map(([, id]: string[]) => id)).not.to.include(inFlight);
    // The run an hour ago is the anchor; the charge in flight holds the next window back to its own creation.
    const [created] = await sys.sql<{ created_at: string }>("select created_at::text from subscription_charges where id = ?", [inFlight]);
    const [latest] = await sys.sql<{ next_since: string }>("select next_since::text from reconciliation_runs order by finished_at desc limit 1");
    expect(latest!.next_since).to.equal(created!.created_at);

    // Settled wrongly (SUCCEEDED, no money moved) after that run: the next run still sees it.
    await sys.sql("update subscription_charges set status = 'SUCCEEDED', settled_at = now() where id = ?", [inFlight]);
    const next = await sys.admin.get("/admin/v1/reconciliation");
    expect(found(next.body)).to.deep.include(["SUCCEEDED_OWNER_WITHOUT_MONEY", inFlight]);
  });

  it("with no run an overlap old, checks all history; after the sandbox clock moves, starts no later than before it moved", async () => {
    await sys.sql("delete from reconciliation_runs");
    const first = await sys.admin.get("/admin/v1/reconciliation");
    expect(first.status).to.equal(200);
    const [run] = await sys.sql<{ since: string | null; next_since: string | null }>("select since::text, next_since::text from reconciliation_runs");
    expect(run).to.deep.equal({ since: null, next_since: null });

    // That run becomes an overlap old (database time); then the sandbox clock jumps a month.
    await sys.sql("update reconciliation_runs set started_at = started_at - interval '1 hour'");
    // The run's service time, or a charge still in flight if older (another test's; one with an anomaly recorded is not).
    const [before] = await sys.sql<{ at: string }>(
      `select least(r.service_started_at, (select min(c.created_at) from subscription_charges c where c.status = 'PENDING'
                and not exists (select 1 from reconciliation_anomalies a where a.owner_id = c.id::text)))::text as at
         from reconciliation_runs r`,
    );
    await advanceBy(sys, 30 * 86_400);
    await sys.admin.get("/admin/v1/reconciliation");
    const [latest] = await sys.sql<{ next_since: string }>("select next_since::text from reconciliation_runs order by finished_at desc limit 1");
    // Not "now - overlap" in the new month: a process still on the old offset may write rows dated before the jump.
    expect(latest!.next_since).to.equal(before!.at);
    const third = await sys.admin.get("/admin/v1/reconciliation");
    expect(third.status).to.equal(200);
    const [used] = await sys.sql<{ since: string }>("select since::text from reconciliation_runs order by finished_at desc limit 1");
    expect(used!.since).to.equal(before!.at);
  });

  it("a refund parked long ago that settles later: its old charge's refunded total is checked again", async () => {
    const { api, id: merchantId } = await sys.createMerchant();
    const { subscriptionId, user } = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "3", interval: "DAY" }, credits: { USDT_TRON: "50" } });
    const charge = await chargeRow(subscriptionId, "SUCCEEDED", "5", { createdSecondsAgo: TWO_HOURS });
    await walletCharge(charge, user.id, merchantId, "5");
    const { id: refund } = await make.refund(sys, { chargeId: charge, amount: "1" });
    await sys.sql("update subscription_refunds set created_at = now() - interval '2 hours', parked_at = now() - interval '1 hour' where id = ?", [refund]);
    await backdateMoney(`subscription-charge-${charge}`, TWO_HOURS);
    await windowFrom(3600);

    const first = await sys.admin.get("/admin/v1/reconciliation");
    expect(found(first.body)).to.deep.include(["PARKED_ROW", refund]);
    // Settled later (an operator retried it), and its charge's refunded total written wrong: 2 for a refund of 1.
    await sys.sql("update subscription_refunds set status = 'FAILED', failure_reason = 'MERCHANT_BALANCE_INSUFFICIENT', parked_at = null where id = ?", [
      refund,
    ]);
    await sys.sql("update subscription_charges set asset_amount_refunded = 2, amount_refunded = 2 where id = ?", [charge]);
    await windowFrom(60);
    const next = await sys.admin.get("/admin/v1/reconciliation");
    expect(found(next.body)).to.deep.include(["AMOUNT_MISMATCH", charge]);
    expect(found(next.body)).not.to.deep.include(["PARKED_ROW", refund]);
  });

  it("two payout.paid events for one payout, the first long before the window: reported, and listed while they last", async () => {
    const { id: merchantId } = await sys.createMerchant();
    const payoutId = "0b0b0b0b-0000-4000-8000-000000000001";
    await make.event(sys, { merchantId, type: "payout.paid", data: { id: payoutId }, secondsAgo: TWO_HOURS, relayed: true });
    await make.event(sys, { merchantId, type: "payout.paid", data: { id: payoutId }, relayed: true });
    await windowFrom(3600);
    const res = await sys.admin.get("/admin/v1/reconciliation");
    expect(found(res.body)).to.deep.include(["PAYOUT_PAID_TWICE", payoutId]);
    // Both events now older than the window: recorded, it is still counted.
    await sys.sql("update events set created_at = created_at - interval '2 hours' where type = 'payout.paid' and data->>'id' = ?", [payoutId]);
    await windowFrom(60);
    const later = await sys.admin.get("/admin/v1/reconciliation");
    expect(found(later.body)).to.deep.include(["PAYOUT_PAID_TWICE", payoutId]);
  });

  it("the job's full pass: due when none started within RECONCILE_FULL_INTERVAL_MS, and one that never finished is not started again beside it", async () => {
    await sys.sql("delete from reconciliation_runs");
    const ctx = sys.context();
    expect(await fullPassDue(ctx.em, 86_400_000)).to.equal(true);
    const id = await startRun(ctx.em, "FULL", null, 0);
    expect(await fullPassDue(ctx.em, 86_400_000)).to.equal(false);
    // It never finished (a timeout): it leaves no start for incremental runs.
    expect(await windowStart(ctx.em)).to.equal(null);
    await sys.sql("update reconciliation_runs set started_at = now() - interval '2 days' where id = ?", [id]);
    expect(await fullPassDue(ctx.em, 86_400_000)).to.equal(true);
  });
});

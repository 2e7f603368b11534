import { expect } from "chai";
import { ManualClock } from "../../support/manual-clock.ts";
import { addMonths, ensureMonth, monthStart } from "../../../services/platform/database/monthly-partitions.ts";
import { createLogger } from "../../../services/platform/logger.ts";
import { RETAINED_TABLES } from "../../../services/retention/retention-registry.ts";
import { sweepRetention } from "../../../services/retention/sweep-retention.ts";
import { approvedSubscription, waitForCharges } from "../../support/billing.ts";
import { subscriptionsRpc } from "../../support/subscriptions.ts";
import { settle } from "../../support/sweeps.ts";
import { type TestSystem, useTestSystem } from "../../support/system.ts";

const DAY_MS = 86_400_000;

async function booksClean(sys: TestSystem) {
  const ledger = await sys.admin.get("/admin/v1/ledger/check");
  expect(ledger.body.ok, ledger.text).to.equal(true);
  const rec = await sys.admin.get("/admin/v1/reconciliation");
  expect(rec.body.status, rec.text).to.equal("ok");
}

/**
 * Reconciliation and the ledger check read money records (ledger, charges,
 * payouts, orders), which retention never touches: with every event, delivery
 * and attempt of a merchant's history dropped, both still come out clean and
 * every money row is still there.
 */
describe("reconciliation after retention drops a month", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;
  const sys = useTestSystem();
  before(async () => {
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  it("is clean before and after the drop, and no money row is gone", async () => {
    const shop = await sys.createMerchant("Reconciled shop");
    await shop.api.post("/api/v1/webhook-endpoints", { url: "https://example.com/hooks" });
    const { subscriptionId } = await approvedSubscription(sys, shop.api, rpc.client, { plan: { amount: "7" } });
    await waitForCharges(sys, subscriptionId, 1);
    await settle(sys);
    await booksClean(sys);
    const money = async () =>
      (
        await sys.sql<{ n: string }>(
          "select (select count(*) from ledger_transactions) + (select count(*) from ledger_entries) + (select count(*) from subscription_charges) as n",
        )
      )[0]!.n;
    const before = await money();

    // The history as it stands eight months on: everything done (relayed, emails collected, deliveries over), all of it old.
    const old = addMonths(monthStart(new Date()), -8);
    for (const spec of RETAINED_TABLES) await ensureMonth(sys.system.orm!.em.fork(), spec, old);
    const at = new Date(old.getTime() + 5 * DAY_MS);
    await sys.sql("update webhook_deliveries set status = 'SUCCEEDED', next_attempt_at = null, event_created_at = ?", [at]);
    await sys.sql("update webhook_delivery_attempts set outcome = 'SUCCEEDED', event_created_at = ?", [at]);
    await sys.sql("update events set created_at = ?", [at]);
    await sys.sql("update event_feed set event_created_at = ?", [at]);
    await sys.sql("delete from event_outbox");
    const moved = await sys.sql<{ n: number }>("select count(*)::int as n from events");
    expect(moved[0]!.n).to.be.greaterThan(0);

    const res = await sweepRetention({ em: sys.system.orm!.em.fork(), clock: new ManualClock(new Date()) }, sys.config.retention, createLogger("silent"));
    // The audit log of this run holds no month past retention (its entries are written at database time, now).
    for (const t of res.tables.filter((t) => t.table !== "audit_entries")) expect(t.dropped, t.table).to.have.length.greaterThan(0);
    expect((await sys.sql<{ n: number }>("select count(*)::int as n from events"))[0]!.n).to.equal(0);

    await booksClean(sys);
    expect(await money()).to.equal(before);
  });
});

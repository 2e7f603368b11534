import { expect } from "chai";
import { ManualClock } from "../../support/manual-clock.ts";
import { loadConfig } from "../../../services/platform/config.ts";
import { addMonths, ensureMonth, monthStart, partitionName } from "../../../services/platform/database/monthly-partitions.ts";
import { createMetrics } from "../../../services/platform/observability/metrics.ts";
import { createLogger } from "../../../services/platform/logger.ts";
import type { JobDeps } from "../../../services/platform/queue/define-job.ts";
import { RETAINED_TABLES } from "../../../services/retention/retention-registry.ts";
import { retentionJobs } from "../../../services/retention/jobs.ts";
import { MONTHS_AHEAD, sweepRetention } from "../../../services/retention/sweep-retention.ts";
import { type TestSystem, useTestSystem } from "../../support/system.ts";
import { createPlan } from "../../support/subscriptions.ts";
import { advanceBy } from "../../support/billing.ts";
import { make } from "../../support/factories/index.ts";

const DAY_MS = 86_400_000;
const logger = createLogger("silent");
const retention = loadConfig({}).retention;

/** A context on the system's database whose clock says `now`. */
const contextAt = (sys: TestSystem, now: Date) => ({ em: sys.system.orm!.em.fork(), clock: new ManualClock(now) });
const sweepAt = (sys: TestSystem, now: Date) => sweepRetention(contextAt(sys, now), retention, logger);
const exists = async (sys: TestSystem, name: string) => (await sys.sql<{ found: boolean }>("select to_regclass(?) is not null as found", [name]))[0]!.found;
const partitionOf = async (sys: TestSystem, table: string, id: string) =>
  (await sys.sql<{ p: string }>(`select tableoid::regclass::text as p from ${table} where id = ?`, [id]))[0]?.p;

/** Months older than any retention default, created by hand (a fresh database has months from now on only). */
async function createMonths(sys: TestSystem, months: Date[]) {
  for (const spec of RETAINED_TABLES) for (const m of months) await ensureMonth(sys.system.orm!.em.fork(), spec, m);
}

/** An event at `at`, its emails collected and (unless said otherwise) relayed: done with but for retention. */
async function insertEvent(sys: TestSystem, merchantId: string, at: Date, options: { relayed?: boolean; type?: string } = {}) {
  return (await make.event(sys, { merchantId, at, type: options.type, relayed: options.relayed !== false, emailsCollected: true })).id;
}

/** A delivery of the event, made at its time, with one failed attempt. */
async function insertDelivery(sys: TestSystem, merchantId: string, endpointId: string, eventId: string, eventAt: Date, status: "PENDING" | "SUCCEEDED") {
  const { id } = await make.delivery(sys, { merchantId, endpointId, eventId, eventAt, status });
  await make.deliveryAttempt(sys, { deliveryId: id, endpointId, eventId, eventAt });
  return id;
}

describe("retention sweep (monthly partitions)", () => {
  let merchant: Awaited<ReturnType<TestSystem["createMerchant"]>>;
  let endpointId: string;
  const now = new Date();
  // Three months, all older than the events' 90 days and the deliveries' 30.
  const [m1, m2, m3] = [7, 6, 5].map((back) => addMonths(monthStart(now), -back)) as [Date, Date, Date];
  const mid = (m: Date) => new Date(m.getTime() + 10 * DAY_MS);

  // No workers: nothing relays or delivers behind the test's back.
  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    merchant = await sys.createMerchant("Retention shop");
    const endpoint = await merchant.api.post("/api/v1/webhook-endpoints", { url: "https://example.com/hooks" });
    endpointId = endpoint.body.id;
    await createMonths(sys, [m1, m2, m3]);
  });

  it("drops a month past retention, keeps one holding an unrelayed event or a pending delivery", async () => {
    const done = await insertEvent(sys, merchant.id, mid(m1));
    await insertDelivery(sys, merchant.id, endpointId, done, mid(m1), "SUCCEEDED");
    const unrelayed = await insertEvent(sys, merchant.id, mid(m2), { relayed: false });
    const retried = await insertEvent(sys, merchant.id, mid(m3));
    const pending = await insertDelivery(sys, merchant.id, endpointId, retried, mid(m3), "PENDING");

    const res = await sweepAt(sys, now);
    const of = (table: string) => res.tables.find((t) => t.table === table)!;
    expect(of("events").dropped).to.include(partitionName("events", m1));
    expect(of("events").kept).to.include.members([partitionName("events", m2), partitionName("events", m3)]);
    expect(of("webhook_deliveries").dropped).to.include(partitionName("webhook_deliveries", m1));
    expect(of("webhook_deliveries").kept).to.include(partitionName("webhook_deliveries", m3));
    expect(of("webhook_delivery_attempts").kept).to.include(partitionName("webhook_delivery_attempts", m3));
    expect(await exists(sys, partitionName("events", m1))).to.equal(false);
    expect(await partitionOf(sys, "events", unrelayed)).to.equal(partitionName("events", m2));
    expect(await partitionOf(sys, "events", retried)).to.equal(partitionName("events", m3));
    expect(await partitionOf(sys, "webhook_deliveries", pending)).to.equal(partitionName("webhook_deliveries", m3));

    // Once the work is done, the months go on the next run.
    await sys.sql("delete from event_outbox where event_id = ?", [unrelayed]);
    await sys.sql("update webhook_deliveries set status = 'SUCCEEDED', next_attempt_at = null where id = ?", [pending]);
    const again = await sweepAt(sys, now);
    expect(again.tables.find((t) => t.table === "events")!.dropped).to.include.members([partitionName("events", m2), partitionName("events", m3)]);
    expect(await exists(sys, partitionName("webhook_deliveries", m3))).to.equal(false);
  });

  it("creates the current month and three ahead, and does nothing more when run twice or at once", async () => {
    const later = addMonths(monthStart(now), 1);
    await Promise.all([sweepAt(sys, later), sweepAt(sys, later)]);
    for (const spec of RETAINED_TABLES) {
      for (let i = 0; i <= MONTHS_AHEAD; i++) expect(await exists(sys, partitionName(spec.table, addMonths(later, i)))).to.equal(true);
    }
    const third = await sweepAt(sys, later);
    for (const t of third.tables)
      expect({ table: t.table, created: t.created, dropped: t.dropped }).to.deep.equal({ table: t.table, created: [], dropped: [] });
  });

  it("answers a read past retention as documented: GET 404 saying how long events are kept, lists show what is kept", async () => {
    const plan = await createPlan(merchant.api);
    const [event] = await sys.sql<{ id: string }>("select id from events where merchant_id = ? and type = 'plan.created' and data->>'id' = ?", [
      merchant.id,
      plan.id,
    ]);
    const old = addMonths(monthStart(now), -8);
    await createMonths(sys, [old]);
    // The event as it would be eight months on: relayed, its month long past retention.
    await sys.sql("update events set created_at = ? where id = ?", [mid(old), event!.id]);
    await sys.sql("delete from event_outbox where event_id = ?", [event!.id]);
    const kept = await insertEvent(sys, merchant.id, new Date(now.getTime() - DAY_MS));
    expect((await merchant.api.get(`/api/v1/events/${event!.id}`)).status).to.equal(200);

    await sweepAt(sys, now);
    const gone = await merchant.api.get(`/api/v1/events/${event!.id}`);
    expect(gone.status).to.equal(404);
    expect(gone.body).to.deep.equal({ error: "EVENT_NOT_FOUND", message: `event ${event!.id} not found (events are kept for 90 days)` });
    const list = await merchant.api.get("/api/v1/events?limit=100");
    const ids = list.body.data.map((e: { id: string }) => e.id);
    expect(ids).to.include(kept).and.not.include(event!.id);
    const redeliver = await merchant.api.post(`/api/v1/events/${event!.id}/redeliver`, {});
    expect(redeliver.status).to.equal(404);
  });

  it("counts months created and dropped and sets rows per table (billing_retention_*)", async () => {
    const metrics = createMetrics();
    const deps = { config: sys.config, logger, orm: sys.system.orm!, clock: new ManualClock(addMonths(monthStart(now), 2)), metrics } as unknown as JobDeps;
    await retentionJobs[0]!.handle(deps);
    const text = await metrics.scrape();
    expect(text).to.match(/billing_retention_partitions_created_total\{table="events"\} [1-9]/);
    expect(text).to.match(/billing_retention_partitions_dropped_total\{table="events"\} \d/);
    expect(text).to.match(/billing_retention_rows\{table="events"\} \d/);
  });
});

describe("retention sweep and the default partition", () => {
  let merchantId: string;
  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    merchantId = (await sys.createMerchant("Far future shop")).id;
  });

  it("moves rows that fell into the default partition into their month when it creates it (a clock moved a year ahead)", async () => {
    const ahead = new Date(Date.now() + 365 * DAY_MS);
    const id = await insertEvent(sys, merchantId, ahead);
    expect(await partitionOf(sys, "events", id)).to.equal("events_default");
    const res = await sweepAt(sys, ahead);
    expect(res.tables.find((t) => t.table === "events")!.created).to.include(partitionName("events", monthStart(ahead)));
    expect(await partitionOf(sys, "events", id)).to.equal(partitionName("events", monthStart(ahead)));
    expect((await sys.sql("select 1 from events_default")).length).to.equal(0);
  });

  it("deletes strays in the default partition once past retention, unless still needed", async () => {
    const old = new Date(Date.now() - 400 * DAY_MS);
    const stray = await insertEvent(sys, merchantId, old);
    const needed = await insertEvent(sys, merchantId, old, { relayed: false });
    expect(await partitionOf(sys, "events", stray)).to.equal("events_default");
    const res = await sweepAt(sys, new Date());
    expect(res.tables.find((t) => t.table === "events")!.purged).to.equal(1);
    expect(await partitionOf(sys, "events", stray)).to.equal(undefined);
    expect(await partitionOf(sys, "events", needed)).to.equal("events_default");
  });

  it("a sandbox clock advance makes every retained table's months of the new time before anything runs there", async () => {
    const now = await advanceBy(sys, 800 * 86_400);
    for (const spec of RETAINED_TABLES) {
      for (let i = 0; i <= MONTHS_AHEAD; i++) expect(await exists(sys, partitionName(spec.table, addMonths(monthStart(now), i))), spec.table).to.equal(true);
    }
    // What the new time writes lands in its month, not in the default partition.
    const id = await insertEvent(sys, merchantId, now);
    expect(await partitionOf(sys, "events", id)).to.equal(partitionName("events", monthStart(now)));
  });
});

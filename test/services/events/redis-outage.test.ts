import { expect } from "chai";
import { startTestSystem, type TestSystem } from "../../support/system.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";
import { startRedisProcess, type RedisProcess } from "../../support/redis-process.ts";
import { emitEvents } from "../../support/events.ts";
import { drainQueues } from "../../support/sweeps.ts";
import { eventually } from "../../support/eventually.ts";
import { relayEvents } from "../../../services/events/relay-events.ts";
import { Redis } from "ioredis";

describe("webhooks across a Redis outage", () => {
  let redis: RedisProcess;
  let sys: TestSystem;
  let receiver: WebhookReceiver;

  before(async () => {
    redis = await startRedisProcess();
    sys = await startTestSystem({ workerGroups: ["webhooks"], env: { REDIS_URL: redis.url, SWEEP_INTERVAL_MS: "300" } });
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver?.close();
    await sys?.close();
    await redis?.stop();
  });

  it("delivers an event committed while Redis was down once Redis is back (even empty)", async () => {
    const { id: merchantId, api } = await sys.createMerchant("Outage");
    expect((await api.post("/api/v1/webhook-endpoints", { url: receiver.url, ordered: true })).status).to.equal(201);
    const [before] = await emitEvents(sys, merchantId, 1);
    await receiver.waitFor((r) => r.some((x) => x.headers["webhook-id"] === before));
    await drainQueues(sys, ["webhooks"]); // that delivery's job has ended: no worker is busy when Redis goes

    await redis.stop();
    // The changes and their events commit without Redis: Postgres is the outbox.
    const during = await emitEvents(sys, merchantId, 3);
    // The relay's job cannot be fetched now; run the relay by hand instead: it makes the deliveries in Postgres,
    // cannot queue them, and sends nothing (a relay run already in flight may hold its lock: try until they are relayed).
    const pending = await eventually(
      async () => {
        await relayEvents(sys.context(), sys.system.queues!);
        const rows = await sys.sql<{ status: string; attempt_count: number }>(
          "select d.status, d.attempt_count from webhook_deliveries d where d.event_id = any(?::uuid[])",
          [`{${during.join(",")}}`],
        );
        return rows.length === 3 ? rows : undefined;
      },
      10_000,
      "the relay during the outage",
    );
    expect(pending.every((d) => d.status === "PENDING" && d.attempt_count === 0)).to.equal(true);
    // This one waits in the outbox for the next relay run (the watchdog's, or the queue's once Redis is back).
    const plan = await api.post("/api/v1/subscription-plans", { name: "During outage", amount: "1", currency: "USD", interval: "MONTH" });
    expect(plan.status).to.equal(201);
    expect(receiver.received.some((x) => during.includes(String(x.headers["webhook-id"])))).to.equal(false);
    // The relay may already have made the deliveries (the sweep watchdog runs it in-process while Redis is away), but none went out.
    expect(await sys.sql("select id from webhook_deliveries where status <> 'PENDING'")).to.have.length(1);

    // Redis returns with no data at all: no jobs, no schedulers. The workers declare the sweeps again:
    // the due-deliveries sweep queues the three, the relay takes the plan's event.
    await redis.start();
    await receiver.waitFor((r) => during.every((id) => r.some((x) => x.headers["webhook-id"] === id)) && r.some((x) => x.body.includes(plan.body.id)), 20_000);
    const ids = receiver.received.map((x) => String(x.headers["webhook-id"]));
    expect(ids.filter((id) => during.includes(id))).to.deep.equal(during); // once each, in order
  });

  it("after FLUSHALL (connections stay up, no reconnect) the sweeps come back within an interval and deliver", async () => {
    const { id: merchantId, api } = await sys.createMerchant("Flushed");
    expect((await api.post("/api/v1/webhook-endpoints", { url: receiver.url })).status).to.equal(201);
    const admin = new Redis(redis.url);
    try {
      await admin.flushall();
      expect(await sys.system.queues!.sweepQueue("webhooks").getJobSchedulers()).to.have.length(0);
      const started = Date.now();
      const after = await emitEvents(sys, merchantId, 2);
      await receiver.waitFor((r) => after.every((id) => r.some((x) => x.headers["webhook-id"] === id)), 10_000);
      // Nothing reconnected: the per-process watchdog declares the schedulers again within a few
      // sweep intervals (300 ms here). (The events above may already have gone out through the relay poke.)
      await eventually(async () => (await sys.system.queues!.sweepQueue("webhooks").getJobSchedulers()).length > 0, 5_000, "schedulers declared again");
      expect(Date.now() - started).to.be.lessThan(10_000);
    } finally {
      admin.disconnect();
    }
  });
});

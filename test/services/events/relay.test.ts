import { expect } from "chai";
import { Webhook } from "standardwebhooks";
import { ADMIN_KEY, useTestSystem } from "../../support/system.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";
import { eventually } from "../../support/eventually.ts";
import { startWebhookWorkers } from "../../support/webhook-workers.ts";
import { emitEvents } from "../../support/events.ts";
import { relayEvents } from "../../../services/events/relay-events.ts";
import { sweepDueDeliveries } from "../../../services/events/sweep-due-deliveries.ts";
import { deliveryJobId } from "../../../services/events/webhook-queue.ts";
import { settle } from "../../support/sweeps.ts";
import { make } from "../../support/factories/index.ts";

describe("outbox relay and delivery queue", () => {
  let receiver: WebhookReceiver;

  // No workers: the test drives the relay and the sweep by hand, then starts the workers.
  const sys = useTestSystem({ workerGroups: [], env: { WEBHOOK_RETRY_SCHEDULE: "3600" } });
  before(async () => {
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver?.close();
  });

  const queuedJobs = async () => {
    const counts = await sys.system.queues!.queue("webhooks").getJobCounts("waiting", "delayed", "prioritized", "active");
    return Object.values(counts).reduce((a, b) => a + b, 0);
  };

  it("creates each delivery once and queues it once when the relay and the sweep run twice; each event arrives once", async () => {
    const { id: merchantId, api } = await sys.createMerchant("Relay");
    const a = (await api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/a` })).body;
    const b = (await api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/b`, enabledEvents: ["subscription.renewed"] })).body;
    const renewals = await emitEvents(sys, merchantId, 5, "subscription.renewed");
    const plans = await emitEvents(sys, merchantId, 3, "plan.created");

    const first = await relayEvents(sys.context(), sys.system.queues!);
    expect(first).to.deep.equal({ events: 8, deliveries: 8 + 5 });
    const second = await relayEvents(sys.context(), sys.system.queues!);
    expect(second).to.deep.equal({ events: 0, deliveries: 0 });
    const rows = await sys.sql<{ endpoint_id: string; n: string }>("select endpoint_id, count(*) as n from webhook_deliveries group by endpoint_id");
    expect(Object.fromEntries(rows.map((r) => [r.endpoint_id, Number(r.n)]))).to.deep.equal({ [a.id]: 8, [b.id]: 5 });
    expect(await sys.sql("select event_id from event_outbox where consumer = 'relay'")).to.deep.equal([]);

    // One job per endpoint (its worker drains the endpoint in order); the sweep finds the same ids: no new job.
    expect(await queuedJobs()).to.equal(2);
    expect(await sweepDueDeliveries(sys.context(), sys.system.queues!)).to.equal(2);
    expect(await sweepDueDeliveries(sys.context(), sys.system.queues!)).to.equal(2);
    expect(await queuedJobs()).to.equal(2);

    const workers = await startWebhookWorkers(sys);
    try {
      await receiver.waitFor((r) => r.length >= 13);
      // The relay and the sweep run once more, and every job queued so far has run: a duplicate would have arrived by now.
      await settle(sys, { groups: ["webhooks"] });
      const byPath = (p: string) => receiver.received.filter((x) => x.path === p).map((x) => String(x.headers["webhook-id"]));
      expect(byPath("/hooks/a")).to.deep.equal([...renewals, ...plans]);
      expect(byPath("/hooks/b")).to.deep.equal(renewals);
      for (const hook of receiver.received.filter((x) => x.path === "/hooks/a")) {
        new Webhook(a.secret).verify(hook.body, { ...(hook.headers as Record<string, string>) });
      }
      const statuses = await sys.sql<{ status: string; attempt_count: number }>("select status, attempt_count from webhook_deliveries");
      expect(statuses.every((s) => s.status === "SUCCEEDED" && s.attempt_count === 1)).to.equal(true);
    } finally {
      await workers.close();
    }
  });

  it("queues a due delivery again from Postgres when its job was lost (crash between commit and enqueue)", async () => {
    const { id: merchantId, api } = await sys.createMerchant("Lost jobs");
    await api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/lost` });
    const [eventId] = await emitEvents(sys, merchantId, 1);
    await relayEvents(sys.context(), sys.system.queues!);
    await sys.system.queues!.queue("webhooks").obliterate({ force: true }); // the jobs vanish
    expect(await queuedJobs()).to.equal(0);
    const workers = await startWebhookWorkers(sys);
    try {
      // The recurring sweep (every SWEEP_INTERVAL_MS) finds the pending delivery and queues it.
      await receiver.waitFor((r) => r.some((x) => x.headers["webhook-id"] === eventId));
    } finally {
      await workers.close();
    }
  });

  it("delivers and records an event whose createdAt has microseconds (the deliveries' partition key is copied exactly)", async () => {
    const { id: merchantId, api } = await sys.createMerchant("Microseconds");
    await api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/micro` });
    const row = await make.event(sys, { merchantId, secondsAgo: 1.234567 });
    await relayEvents(sys.context(), sys.system.queues!);
    const workers = await startWebhookWorkers(sys);
    try {
      await receiver.waitFor((r) => r.some((x) => x.path === "/hooks/micro"));
      const [delivery] = await eventually(async () => {
        const rows = await sys.sql<{ status: string; same: boolean }>(
          "select d.status, d.event_created_at = e.created_at as same from webhook_deliveries d join events e on e.id = d.event_id where d.event_id = ?",
          [row.id],
        );
        return rows[0]?.status === "SUCCEEDED" ? rows : undefined;
      });
      expect(delivery!.same).to.equal(true);
    } finally {
      await workers.close();
    }
  });

  it("runs a retry within seconds once the sandbox clock passes its due time", async () => {
    const { id: merchantId, api } = await sys.createMerchant("Clock");
    const ep = (await api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/clock` })).body;
    let calls = 0;
    receiver.respond = (r) => (r.path === "/hooks/clock" && ++calls === 1 ? { status: 500 } : { status: 200 });
    const [eventId] = await emitEvents(sys, merchantId, 1);
    const workers = await startWebhookWorkers(sys);
    try {
      const retrying = await eventually(async () => {
        const res = await api.get(`/api/v1/webhook-endpoints/${ep.id}/deliveries`);
        const d = res.body.data[0];
        // Wait until the first attempt has finished and the retry is scheduled (not while it is in flight).
        const scheduled = d?.attemptCount === 1 && d.nextAttemptAt && d.attempts[0] && Date.parse(d.nextAttemptAt) > Date.parse(d.attempts[0].attemptedAt);
        return scheduled ? d : undefined;
      });
      // WEBHOOK_RETRY_SCHEDULE=3600: the retry is an hour away (±10 % jitter) on the service clock.
      const waitMs = Date.parse(retrying.nextAttemptAt) - Date.parse(retrying.attempts[0].attemptedAt);
      expect(waitMs).to.be.within(3240_000, 3960_000);
      // A delayed job waits for it in Redis; it is promoted when the sweep sees the delivery due.
      const retryJob = await sys.system.queues!.queue("webhooks").getJob(deliveryJobId({ endpointId: ep.id, deliveryId: retrying.id, attemptNumber: 2 }));
      expect(await retryJob?.getState()).to.equal("delayed");
      const advanced = await sys.http.post("/admin/v1/sandbox/clock/advance", { seconds: 3961 }, { "x-admin-key": ADMIN_KEY });
      expect(advanced.status).to.equal(200);
      const started = Date.now();
      await receiver.waitFor((r) => r.filter((x) => x.headers["webhook-id"] === eventId).length === 2, 10_000);
      expect(Date.now() - started).to.be.below(5000);
    } finally {
      receiver.respond = () => ({ status: 200 });
      await workers.close();
    }
  });
});

import { expect } from "chai";
import { startTestSystem, type TestSystem } from "../../support/system.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";
import { startRedisProcess, type RedisProcess } from "../../support/redis-process.ts";
import { emitEvents } from "../../support/events.ts";

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

    await redis.stop();
    // The change and its event commit without Redis: Postgres is the outbox.
    const during = await emitEvents(sys, merchantId, 3);
    const plan = await api.post("/api/v1/subscription-plans", { name: "During outage", amount: "1", currency: "USD", interval: "MONTH" });
    expect(plan.status).to.equal(201);
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.received.some((x) => during.includes(String(x.headers["webhook-id"])))).to.equal(false);
    // The relay may already have turned them into deliveries (the LISTEN/NOTIFY poke needs no Redis), but none went out.
    expect(await sys.sql("select id from webhook_deliveries where status <> 'PENDING'")).to.have.length(1);

    // Redis returns with no data at all: no jobs, no schedulers. The workers declare the sweeps again.
    await redis.start();
    await receiver.waitFor((r) => during.every((id) => r.some((x) => x.headers["webhook-id"] === id)) && r.some((x) => x.body.includes(plan.body.id)), 20_000);
    const ids = receiver.received.map((x) => String(x.headers["webhook-id"]));
    expect(ids.filter((id) => during.includes(id))).to.deep.equal(during); // once each, in order
  });
});

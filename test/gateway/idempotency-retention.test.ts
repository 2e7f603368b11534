import { expect } from "chai";
import { Redis } from "ioredis";
import { infrastructure } from "../support/infrastructure.ts";
import { createPlan, createWalletUser, subscriptionBody } from "../support/subscriptions.ts";
import { eventually } from "../support/eventually.ts";
import { useTestSystem } from "../support/system.ts";

/**
 * An Idempotency-Key's answer is kept RETENTION_IDEMPOTENCY_HOURS (Redis
 * expires it); sent again after that, the key is a new request.
 */
describe("Idempotency-Key retention (RETENTION_IDEMPOTENCY_HOURS)", () => {
  let redis: Redis;
  const sys = useTestSystem({ env: { RETENTION_IDEMPOTENCY_HOURS: "2" }, workerGroups: [] });
  before(async () => {
    redis = new Redis((await infrastructure()).redisUrl);
  });
  after(async () => {
    redis?.disconnect();
  });

  it("keeps the answer for the configured hours, then treats the same key as new", async () => {
    const shop = await sys.createMerchant("Idempotent shop");
    const key = "subscribe-once";
    const plan = await createPlan(shop.api);
    const user = await createWalletUser(sys);
    const body = (ref: string) => subscriptionBody(plan.id, user.id, { externalReference: ref });
    const first = await shop.api.post("/api/v1/subscriptions", body("first"), { "idempotency-key": key });
    expect(first.status, first.text).to.equal(201);
    const replay = await shop.api.post("/api/v1/subscriptions", body("first"), { "idempotency-key": key });
    expect(replay.body.subscriptionId).to.equal(first.body.subscriptionId);
    expect((await shop.api.post("/api/v1/subscriptions", body("other"), { "idempotency-key": key })).body.error).to.equal("IDEMPOTENCY_KEY_REUSED");

    const [stored] = await redis.keys(`${sys.config.queuePrefix}:idempotency:${shop.id}:*`);
    expect(stored, "the key's stored answer").to.be.a("string");
    const ttl = await redis.pttl(stored!);
    expect(ttl).to.be.within(2 * 3_600_000 - 60_000, 2 * 3_600_000);

    // Its hours over (Redis expires it): the same key with another body is a new request, not 409 IDEMPOTENCY_KEY_REUSED.
    await redis.pexpire(stored!, 1);
    await eventually(async () => ((await redis.exists(stored!)) === 0 ? true : undefined), 5_000, "the key to expire");
    const after = await shop.api.post("/api/v1/subscriptions", body("other"), { "idempotency-key": key });
    expect(after.status, after.text).to.equal(201);
    expect(after.body.subscriptionId).to.not.equal(first.body.subscriptionId);
  });
});

import { expect } from "chai";
import { startTestSystem, type TestSystem, useTestSystem } from "../support/system.ts";
import { startRedisProcess, type RedisProcess } from "../support/redis-process.ts";
import { rateLimiter } from "../../gateway/rate-limit/rate-limit.ts";
import { pino } from "pino";
import { eventually } from "../support/eventually.ts";

const PLANS = "/api/v1/subscription-plans";

/** Parses `"merchant";r=3;t=1` into its parameters. */
const params = (header: string | null) =>
  Object.fromEntries(
    (header ?? "")
      .split(";")
      .slice(1)
      .map((p) => p.split("=") as [string, string])
      .map(([k, v]) => [k, Number(v)]),
  );

describe("per-merchant rate limits (token bucket in Redis)", () => {
  // Empty = unset: the documented defaults (the test harness raises them for other files).
  const sys = useTestSystem({ workerGroups: [], env: { RATE_LIMIT_BURST: "", RATE_LIMIT_PER_SECOND: "" } });

  const limit = (id: string, body: unknown) => sys.admin.request("PATCH", `/admin/v1/merchants/${id}`, { body });

  it("answers with RateLimit and RateLimit-Policy headers from the defaults (burst 200, 100/s)", async () => {
    const { api } = await sys.createMerchant();
    const res = await api.get(PLANS);
    expect(res.status).to.equal(200);
    expect(res.headers.get("ratelimit-policy")).to.equal('"merchant";q=200;w=2');
    expect(res.headers.get("ratelimit")).to.match(/^"merchant";r=\d+;t=\d+$/);
    expect(params(res.headers.get("ratelimit")).r).to.be.within(190, 199);
  });

  it("refuses a merchant over its own limit with 429 RATE_LIMITED and Retry-After, without slowing another merchant", async () => {
    const noisy = await sys.createMerchant("Noisy");
    const quiet = await sys.createMerchant("Quiet");
    const set = await limit(noisy.id, { rateLimitPerSecond: 1, rateLimitBurst: 3 });
    expect(set.status, set.text).to.equal(200);
    expect(set.body).to.deep.include({ id: noisy.id, name: "Noisy", rateLimitPerSecond: 1, rateLimitBurst: 3 });

    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await noisy.api.get(PLANS)).status);
    expect(statuses).to.deep.equal([200, 200, 200]);
    const refused = await noisy.api.get(PLANS);
    expect(refused.status).to.equal(429);
    expect(refused.body.error).to.equal("RATE_LIMITED");
    expect(refused.body.message).to.be.a("string").and.contain("rate limit");
    const retryAfter = refused.headers.get("retry-after")!;
    expect(retryAfter).to.match(/^\d+$/);
    expect(Number(retryAfter)).to.be.at.least(1);
    expect(refused.headers.get("ratelimit-policy")).to.equal('"merchant";q=3;w=3');
    expect(params(refused.headers.get("ratelimit")).r).to.equal(0);
    // All keys of a merchant share the bucket.
    const second = await sys.admin.post(`/admin/v1/merchants/${noisy.id}/api-keys`);
    expect((await sys.http.get(PLANS, { "x-api-key": second.body.apiKey })).status).to.equal(429);
    // Another merchant is untouched.
    expect((await quiet.api.get(PLANS)).status).to.equal(200);
    // The bucket refills at 1 per second: a token comes back.
    const again = await eventually(
      async () => {
        const res = await noisy.api.get(PLANS);
        return res.status !== 429 && res;
      },
      5_000,
      "the bucket to refill",
      200,
    );
    expect(again.status).to.equal(200);
  });

  it("never stores a 429 as an Idempotency-Key's result: the same key may be retried", async () => {
    const m = await sys.createMerchant();
    await limit(m.id, { rateLimitPerSecond: 1, rateLimitBurst: 1 });
    expect((await m.api.get(PLANS)).status).to.equal(200);
    const key = { "idempotency-key": "create-after-429" };
    const body = {
      externalReference: "after-429",
      planId: "00000000-0000-4000-8000-000000000000",
      walletUserId: "00000000-0000-4000-8000-000000000001",
      successUrl: "https://merchant.example/ok",
      cancelUrl: "https://merchant.example/no",
    };
    const refused = await m.api.post("/api/v1/subscriptions", body, key);
    expect(refused.status).to.equal(429);
    // The operator lifts the limit (a new bucket); the retry with the same key runs for real…
    expect((await limit(m.id, { rateLimitPerSecond: 1000, rateLimitBurst: 1000 })).status).to.equal(200);
    const ran = await m.api.post("/api/v1/subscriptions", body, key);
    expect(ran.status, ran.text).to.equal(404);
    expect(ran.body.error).to.equal("PLAN_NOT_FOUND");
    expect(ran.headers.get("idempotent-replayed")).to.equal(null);
    // …and that answer (not the 429) is what the key now replays.
    const replay = await m.api.post("/api/v1/subscriptions", body, key);
    expect(replay.status).to.equal(404);
    expect(replay.headers.get("idempotent-replayed")).to.equal("true");
  });

  it("PATCH /admin/v1/merchants/{id}: null restores the defaults, a field left out stays, bad values are 400 naming the field", async () => {
    const m = await sys.createMerchant("Limits");
    expect((await limit(m.id, { rateLimitPerSecond: 7, rateLimitBurst: 9 })).body).to.include({ rateLimitPerSecond: 7, rateLimitBurst: 9 });
    const partly = await limit(m.id, { rateLimitBurst: null });
    expect(partly.status).to.equal(200);
    expect(partly.body).to.include({ rateLimitPerSecond: 7, rateLimitBurst: null });
    expect((await m.api.get(PLANS)).headers.get("ratelimit-policy")).to.equal('"merchant";q=200;w=29');
    const reset = await limit(m.id, { rateLimitPerSecond: null });
    expect(reset.body).to.include({ rateLimitPerSecond: null, rateLimitBurst: null });
    expect((await m.api.get(PLANS)).headers.get("ratelimit-policy")).to.equal('"merchant";q=200;w=2');

    for (const [body, field] of [
      [{ rateLimitPerSecond: 0 }, "rateLimitPerSecond"],
      [{ rateLimitPerSecond: 100001 }, "rateLimitPerSecond"],
      [{ rateLimitBurst: 1.5 }, "rateLimitBurst"],
      [{ rateLimitBurst: "5" }, "rateLimitBurst"],
      [{}, "body"],
      [{ rateLimit: 5 }, "rateLimit"],
    ] as const) {
      const res = await limit(m.id, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error).to.equal("INVALID_REQUEST");
      expect(res.body.message).to.contain(field);
    }
    expect((await limit("00000000-0000-4000-8000-000000000000", { rateLimitBurst: 5 })).status).to.equal(404);
    const malformed = await limit("not-a-uuid", { rateLimitBurst: 5 });
    expect(malformed.status).to.equal(400);
    expect(malformed.body.message).to.match(/^merchantId: /);
    expect((await sys.http.request("PATCH", `/admin/v1/merchants/${m.id}`, { body: { rateLimitBurst: 5 } })).status).to.equal(401);
  });
});

describe("rate limits while Redis is unreachable", () => {
  let redis: RedisProcess;
  let sys: TestSystem;
  before(async () => {
    redis = await startRedisProcess();
    sys = await startTestSystem({ workerGroups: [], env: { REDIS_URL: redis.url } });
  });
  after(async () => {
    await sys?.close();
    await redis?.stop();
  });

  it("fails open: requests are not refused because the limiter cannot be asked", async () => {
    const limitTo1 = async () => {
      const m = await sys.createMerchant();
      await sys.admin.request("PATCH", `/admin/v1/merchants/${m.id}`, { body: { rateLimitPerSecond: 1, rateLimitBurst: 1 } });
      return m;
    };
    // With Redis up, the second request in a second is refused…
    const before = await limitTo1();
    expect((await before.api.get(PLANS)).status).to.equal(200);
    expect((await before.api.get(PLANS)).status).to.equal(429);
    // …with Redis gone, none is.
    const m = await limitTo1();
    await redis.stop();
    for (let i = 0; i < 5; i++) {
      const res = await m.api.get(PLANS);
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get("ratelimit")).to.equal(null);
    }
  });

  it("logs the outage once and counts every request let through", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });
    const limiter = rateLimiter({
      bucketOf: async () => ({ perSecond: 1, burst: 1 }),
      forget: () => {},
      take: async () => {
        throw new Error("Redis connection is not ready");
      },
      logger,
    });
    for (let i = 0; i < 3; i++) await limiter.middleware({ state: { merchantId: "m" } } as any, async () => {});
    expect(limiter.failOpenCount()).to.equal(3);
    expect(lines.filter((l) => l.includes("rate limiter unavailable"))).to.have.length(1);
  });
});

import { expect } from "chai";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { ConnectError } from "@connectrpc/connect";
import { useTestSystem } from "../support/system.ts";
import { infrastructure } from "../support/infrastructure.ts";
import type { ApiClient } from "../support/http.ts";
import {
  createPlan,
  createWalletUser,
  eventsOf,
  localUrl,
  subscriptionBody,
  subscriptionsRpc,
  tokenOf,
  type WalletUserFixture,
} from "../support/subscriptions.ts";
import { ApprovalOutcome } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { errorCodeOf } from "../../services/platform/rpc/error-code.ts";

/**
 * Found by the soak: a create answered 504 while the service went on and made the subscription; the retry met
 * 409 SUBSCRIPTION_ALREADY_EXISTS and the authorization URL, shown only at create, was lost. A retry under the same
 * Idempotency-Key (kept with the subscription) now answers the subscription it made, with a URL that works; anything
 * else is still the conflict, as the contract says: externalReference is unique per merchant among live subscriptions.
 *
 * The gateway answers a key it still holds by itself (a replay, or IDEMPOTENCY_KEY_IN_USE): these tests forget the
 * merchant's held keys before a retry, as when the hold after a 504 ran out, Redis lost the key or its hours passed,
 * so that the retry reaches the service.
 */
describe("subscription create repeated (same merchant, same externalReference)", () => {
  let api: ApiClient;
  let merchantId: string;
  let plan: any;
  let customer: WalletUserFixture;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let redis: Redis;
  const sys = useTestSystem({ workerGroups: [] });

  before(async () => {
    const merchant = await sys.createMerchant();
    api = merchant.api;
    merchantId = merchant.id;
    plan = await createPlan(api);
    customer = await createWalletUser(sys, { USDT_TRON: "1000" });
    rpc = subscriptionsRpc(sys);
    redis = new Redis((await infrastructure()).redisUrl);
  });
  after(() => {
    rpc?.close();
    redis?.disconnect();
  });

  const body = (overrides: Record<string, unknown> = {}) => subscriptionBody(plan.id, customer.id, { metadata: { order: 7, tier: "gold" }, ...overrides });
  const create = (req: Record<string, unknown>, key?: string) => api.post("/api/v1/subscriptions", req, key === undefined ? {} : { "idempotency-key": key });
  /** The gateway no longer holds this merchant's keys (only theirs: the Redis is shared). */
  const forgetGatewayKeys = async () => {
    const held = await redis.keys(`${sys.config.queuePrefix}:idempotency:${merchantId}:*`);
    if (held.length > 0) await redis.del(...held);
  };
  const retry = async (req: Record<string, unknown>, key?: string) => {
    await forgetGatewayKeys();
    const res = await create(req, key);
    expect(res.headers.get("idempotent-replayed"), "answered by the service, not replayed by the gateway").to.equal(null);
    return res;
  };
  const expectConflict = (res: { status: number; body: { error?: unknown }; text: string }, what: string) => {
    expect(res.status, `${what}: ${res.text}`).to.equal(409);
    expect(res.body.error, what).to.equal("SUBSCRIPTION_ALREADY_EXISTS");
  };

  it("a retry under the same Idempotency-Key while the subscription awaits the customer: 201, the same subscription and URL, which the hosted page accepts; nothing new", async () => {
    const req = body({ serviceReference: "svc-9", authorizationExpiresInMinutes: 90 });
    const key = `create-${randomUUID()}`;
    const first = await create(req, key);
    expect(first.status, first.text).to.equal(201);
    // The same request in another key order and without the API's defaults written out is the same request.
    const again = await retry({ ...req, metadata: { tier: "gold", order: 7 } }, key);
    expect(again.status, again.text).to.equal(201);
    expect(again.body).to.deep.equal(first.body);

    const page = await fetch(localUrl(sys, again.body.authorizationUrl));
    expect(page.status).to.equal(200);
    expect((await fetch(`${sys.baseUrl}/authorize/${"A".repeat(43)}`)).status).to.equal(404);
    expect((await eventsOf(sys, first.body.subscriptionId)).map((e) => e.type)).to.deep.equal(["subscription.created"]);
    expect(await sys.sql("select 1 from audit_entries where action = 'subscription.create' and object_id = ?", [first.body.subscriptionId])).to.have.length(1);
    expect((await api.get(`/api/v1/subscriptions?externalReference=${req.externalReference}`)).body.data).to.have.length(1);

    // The URL works to the end: the customer approves through it.
    const approved = await rpc.client.approveAuthorization({
      token: tokenOf(again.body.authorizationUrl),
      walletUserId: customer.id,
      fundingAsset: "USDT_TRON",
    });
    expect(approved.outcome).to.equal(ApprovalOutcome.APPROVED);
  });

  it("409 SUBSCRIPTION_ALREADY_EXISTS for the same body without a key, or under another key: a second subscription, not a retry", async () => {
    const req = body();
    const key = `create-${randomUUID()}`;
    expect((await create(req, key)).status).to.equal(201);
    expectConflict(await create(req), "the same body, no key");
    expectConflict(await create(req, `other-${randomUUID()}`), "the same body, another key");

    // Made without a key, nothing is a retry of it: the same body again with a key or without is the conflict.
    const keyless = body();
    expect((await create(keyless)).status).to.equal(201);
    expectConflict(await create(keyless), "made without a key, the same body again");
    expectConflict(await create(keyless, `late-${randomUUID()}`), "made without a key, the same body with a key");
  });

  it("409 SUBSCRIPTION_ALREADY_EXISTS for another request under the same reference and key", async () => {
    const req = body();
    const key = `create-${randomUUID()}`;
    expect((await create(req, key)).status).to.equal(201);
    for (const other of [
      { metadata: { order: 8 } },
      { successUrl: "https://merchant.example/elsewhere" },
      { authorizationExpiresInMinutes: 30 },
      { serviceReference: "x" },
    ]) {
      expectConflict(await retry({ ...req, ...other }, key), JSON.stringify(other));
    }
  });

  it("409 once the subscription no longer awaits the customer: approved, or its link expired", async () => {
    const approvedReq = body();
    const approvedKey = `create-${randomUUID()}`;
    const first = await create(approvedReq, approvedKey);
    const approved = await rpc.client.approveAuthorization({
      token: tokenOf(first.body.authorizationUrl),
      walletUserId: customer.id,
      fundingAsset: "USDT_TRON",
    });
    expect(approved.outcome).to.equal(ApprovalOutcome.APPROVED);
    expectConflict(await retry(approvedReq, approvedKey), "after approval");

    // A link past its expiry reads EXPIRED before the sweep records it: its URL would lead nowhere.
    const expiringReq = body();
    const expiringKey = `create-${randomUUID()}`;
    const expiring = await create(expiringReq, expiringKey);
    await sys.sql(
      "update subscription_authorizations set created_at = created_at - interval '2 hours', expires_at = expires_at - interval '2 hours' where subscription_id = ?",
      [expiring.body.subscriptionId],
    );
    expectConflict(await retry(expiringReq, expiringKey), "after expiry");
  });

  it("409 for a link whose token cannot be computed again (a random token from before tokens were derived)", async () => {
    const req = body();
    const key = `create-${randomUUID()}`;
    const first = await create(req, key);
    const legacyHash = createHash("sha256").update(randomBytes(32).toString("base64url")).digest("hex");
    await sys.sql("update subscription_authorizations set token_hash = ? where subscription_id = ?", [legacyHash, first.body.subscriptionId]);
    expectConflict(await retry(req, key), "an underivable token");
  });

  it("over gRPC (no gateway claim): parallel creates under one key answer one subscription; an over-long key is refused naming idempotencyKey", async () => {
    const message = (idempotencyKey: string | undefined) => ({
      merchantId,
      externalReference: `grpc-${randomUUID()}`,
      planId: plan.id,
      walletUserId: customer.id,
      successUrl: "https://merchant.example/ok",
      cancelUrl: "https://merchant.example/no",
      metadataJson: "{}",
      idempotencyKey,
    });
    const req = message(`grpc-${randomUUID()}`);
    const answers = await Promise.all(Array.from({ length: 8 }, () => rpc.client.createSubscription(req)));
    expect(new Set(answers.map((a) => a.subscription!.id)).size).to.equal(1);
    expect(new Set(answers.map((a) => a.authorizationUrl)).size).to.equal(1);
    expect(await sys.sql("select 1 from subscriptions where external_reference = ?", [req.externalReference])).to.have.length(1);

    const refused = await rpc.client.createSubscription(message("k".repeat(201))).catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(ConnectError);
    expect(errorCodeOf(refused as ConnectError)).to.equal("INVALID_REQUEST");
    expect((refused as ConnectError).rawMessage).to.include("idempotencyKey");
  });

  it("over gRPC: parallel creates under one key redeeming a single-use promotion code answer one subscription, none refused as used up", async () => {
    // The review's case: the retries wait on the code's row while the first attempt redeems it and commits; the code is
    // then used up, and the reference (the first attempt's subscription) decides: the same subscription, not a 409.
    const coupon = await api.post("/api/v1/coupons", { name: "Once", duration: "ONCE", percentOff: "10" });
    expect(coupon.status, coupon.text).to.equal(201);
    const code = `ONE-${randomBytes(4).toString("hex")}`;
    const promo = await api.post("/api/v1/promotion-codes", { couponId: coupon.body.id, code, maxRedemptions: 1 });
    expect(promo.status, promo.text).to.equal(201);
    const req = {
      merchantId,
      externalReference: `grpc-code-${randomUUID()}`,
      planId: plan.id,
      walletUserId: customer.id,
      successUrl: "https://merchant.example/ok",
      cancelUrl: "https://merchant.example/no",
      metadataJson: "{}",
      promotionCode: code,
      idempotencyKey: `grpc-${randomUUID()}`,
    };
    const answers = await Promise.allSettled(Array.from({ length: 6 }, () => rpc.client.createSubscription(req)));
    const refusals = answers.filter((a) => a.status === "rejected").map((a) => errorCodeOf((a as PromiseRejectedResult).reason as ConnectError));
    expect(refusals, "no retry refused").to.deep.equal([]);
    const made = answers.map((a) => (a as PromiseFulfilledResult<Awaited<ReturnType<typeof rpc.client.createSubscription>>>).value);
    expect(new Set(made.map((a) => a.subscription!.id)).size).to.equal(1);
    expect(new Set(made.map((a) => a.authorizationUrl)).size).to.equal(1);
  });
});

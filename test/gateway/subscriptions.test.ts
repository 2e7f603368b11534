import { expect } from "chai";
import { randomUUID } from "node:crypto";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { createPlan, createSubscription, createWalletUser, eventsOf, subscriptionBody, type WalletUserFixture } from "../support/subscriptions.ts";

describe("subscriptions over REST", () => {
  let api: ApiClient;
  let other: ApiClient;
  let plan: any;
  let customer: WalletUserFixture;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    api = (await sys.createMerchant("Acme")).api;
    other = (await sys.createMerchant("Other")).api;
    plan = await createPlan(api);
    customer = await createWalletUser(sys);
  });

  const body = (overrides: Record<string, unknown> = {}) => subscriptionBody(plan.id, customer.id, overrides);

  describe("create", () => {
    it("answers 201 with the authorization result and stores every field", async () => {
      const req = body({ serviceReference: "svc-1", metadata: { tier: "gold", n: 1.5 } });
      const res = await api.post("/api/v1/subscriptions", req);
      expect(res.status).to.equal(201);
      expect(Object.keys(res.body).sort()).to.deep.equal(["authorizationExpiresAt", "authorizationUrl", "status", "subscriptionId"]);
      expect(res.body.status).to.equal("PENDING_APPROVAL");
      expect(res.body.authorizationUrl).to.match(/^http:\/\/localhost:\d+\/authorize\/[A-Za-z0-9_-]{43}$/);

      const got = await api.get(`/api/v1/subscriptions/${res.body.subscriptionId}`);
      expect(got.status).to.equal(200);
      const s = got.body;
      expect(s).to.include({
        id: res.body.subscriptionId,
        object: "subscription",
        planId: plan.id,
        status: "PENDING_APPROVAL",
        externalReference: req.externalReference,
        serviceReference: "svc-1",
        walletUserId: customer.id,
        customerEmail: null,
        successUrl: req.successUrl,
        cancelUrl: req.cancelUrl,
        authorizationExpiresInMinutes: 60,
        fundingAsset: null,
        currentPeriodStart: null,
        currentPeriodEnd: null,
        nextBillingAt: null,
        trialEnd: null,
        cancelledAt: null,
      });
      expect(s.metadata).to.deep.equal({ tier: "gold", n: 1.5 });
      expect(s.authorization).to.include({ status: "PENDING", expiresAt: res.body.authorizationExpiresAt, approvedAt: null });
      // Default lifetime: 60 minutes from creation.
      expect(Date.parse(res.body.authorizationExpiresAt) - Date.parse(s.createdAt)).to.equal(60 * 60_000);
    });

    it("the REST record and the subscription.created event data are the same shape and values", async () => {
      const created = await createSubscription(api, plan.id, customer.id);
      const got = await api.get(`/api/v1/subscriptions/${created.subscriptionId}`);
      const events = await eventsOf(sys, created.subscriptionId);
      expect(events.map((e) => e.type)).to.deep.equal(["subscription.created"]);
      expect(events[0]!.data).to.deep.equal(got.body);
    });

    it("accepts customerEmail alone (case-insensitively) and resolves the wallet user", async () => {
      const res = await api.post("/api/v1/subscriptions", body({ walletUserId: undefined, customerEmail: customer.email.toUpperCase() }));
      expect(res.status).to.equal(201);
      const got = await api.get(`/api/v1/subscriptions/${res.body.subscriptionId}`);
      expect(got.body.walletUserId).to.equal(customer.id);
      expect(got.body.customerEmail).to.equal(customer.email.toUpperCase());
    });

    it("accepts both when they name the same wallet user; 400 when they do not", async () => {
      expect((await api.post("/api/v1/subscriptions", body({ customerEmail: customer.email }))).status).to.equal(201);
      const someoneElse = await createWalletUser(sys);
      const res = await api.post("/api/v1/subscriptions", body({ customerEmail: someoneElse.email }));
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal("INVALID_REQUEST");
      expect(res.body.message).to.match(/^customerEmail: /);
    });

    it("400 when neither walletUserId nor customerEmail is given", async () => {
      const res = await api.post("/api/v1/subscriptions", body({ walletUserId: undefined }));
      expect(res.status).to.equal(400);
      expect(res.body).to.include({ error: "INVALID_REQUEST" });
      expect(res.body.message).to.include("at least one of walletUserId or customerEmail");
    });

    const edges: [string, Record<string, unknown>, number, string?][] = [
      ["externalReference missing", { externalReference: undefined }, 400, "externalReference"],
      ["externalReference empty", { externalReference: "" }, 400, "externalReference"],
      ["externalReference 200 chars", { externalReference: "r".repeat(200) }, 201],
      ["externalReference 201 chars", { externalReference: "r".repeat(201) }, 400, "externalReference"],
      ["externalReference a number", { externalReference: 12 }, 400, "externalReference"],
      ["serviceReference 200 chars", { serviceReference: "s".repeat(200) }, 201],
      ["serviceReference 201 chars", { serviceReference: "s".repeat(201) }, 400, "serviceReference"],
      ["planId missing", { planId: undefined }, 400, "planId"],
      ["planId not a uuid", { planId: "plan-1" }, 400, "planId"],
      ["walletUserId not a uuid", { walletUserId: "u-1" }, 400, "walletUserId"],
      ["customerEmail not an email", { customerEmail: "not-an-email" }, 400, "customerEmail"],
      ["successUrl missing", { successUrl: undefined }, 400, "successUrl"],
      ["successUrl relative", { successUrl: "/done" }, 400, "successUrl"],
      ["successUrl javascript:", { successUrl: "javascript:alert(1)" }, 400, "successUrl"],
      ["cancelUrl ftp", { cancelUrl: "ftp://merchant.example/x" }, 400, "cancelUrl"],
      ["cancelUrl too long", { cancelUrl: `https://merchant.example/${"a".repeat(2048)}` }, 400, "cancelUrl"],
      ["authorizationExpiresInMinutes 4", { authorizationExpiresInMinutes: 4 }, 400, "authorizationExpiresInMinutes"],
      ["authorizationExpiresInMinutes 5", { authorizationExpiresInMinutes: 5 }, 201],
      ["authorizationExpiresInMinutes 10080", { authorizationExpiresInMinutes: 10080 }, 201],
      ["authorizationExpiresInMinutes 10081", { authorizationExpiresInMinutes: 10081 }, 400, "authorizationExpiresInMinutes"],
      ["authorizationExpiresInMinutes 7.5", { authorizationExpiresInMinutes: 7.5 }, 400, "authorizationExpiresInMinutes"],
      ["authorizationExpiresInMinutes as text", { authorizationExpiresInMinutes: "60" }, 400, "authorizationExpiresInMinutes"],
      ["metadata an array", { metadata: [1] }, 400, "metadata"],
      ["an unknown field", { colour: "red" }, 400, "colour"],
    ];
    for (const [name, overrides, status, field] of edges) {
      it(`${name} → ${status}`, async () => {
        const res = await api.post("/api/v1/subscriptions", body(overrides));
        expect(res.status, res.text).to.equal(status);
        if (status === 400) {
          expect(res.body.error).to.equal("INVALID_REQUEST");
          expect(res.body.message).to.include(`${field}:`);
        }
      });
    }

    it("authorizationExpiresInMinutes sets the expiry", async () => {
      const res = await api.post("/api/v1/subscriptions", body({ authorizationExpiresInMinutes: 5 }));
      const got = await api.get(`/api/v1/subscriptions/${res.body.subscriptionId}`);
      expect(Date.parse(res.body.authorizationExpiresAt) - Date.parse(got.body.createdAt)).to.equal(5 * 60_000);
      // Every create field is on the record, this one too.
      expect(got.body.authorizationExpiresInMinutes).to.equal(5);
    });

    it("404 PLAN_NOT_FOUND for an unknown plan and for another merchant's plan", async () => {
      const unknown = await api.post("/api/v1/subscriptions", body({ planId: randomUUID() }));
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error).to.equal("PLAN_NOT_FOUND");
      const theirs = await createPlan(other);
      const res = await api.post("/api/v1/subscriptions", body({ planId: theirs.id }));
      expect(res.status).to.equal(404);
      expect(res.body.error).to.equal("PLAN_NOT_FOUND");
    });

    it("404 WALLET_USER_NOT_FOUND for an unknown wallet user id or email", async () => {
      const byId = await api.post("/api/v1/subscriptions", body({ walletUserId: randomUUID() }));
      expect(byId.status).to.equal(404);
      expect(byId.body.error).to.equal("WALLET_USER_NOT_FOUND");
      const byEmail = await api.post("/api/v1/subscriptions", body({ walletUserId: undefined, customerEmail: "nobody@example.com" }));
      expect(byEmail.status).to.equal(404);
      expect(byEmail.body.error).to.equal("WALLET_USER_NOT_FOUND");
    });

    it("409 SUBSCRIPTION_ALREADY_EXISTS for a second live subscription with the same externalReference; freed by cancel", async () => {
      const first = await api.post("/api/v1/subscriptions", body({ externalReference: "order-42" }));
      expect(first.status).to.equal(201);
      const dup = await api.post("/api/v1/subscriptions", body({ externalReference: "order-42" }));
      expect(dup.status).to.equal(409);
      expect(dup.body.error).to.equal("SUBSCRIPTION_ALREADY_EXISTS");
      expect(dup.body.message).to.include("externalReference");
      // Another merchant may use the same reference.
      const theirPlan = await createPlan(other);
      expect((await other.post("/api/v1/subscriptions", subscriptionBody(theirPlan.id, customer.id, { externalReference: "order-42" }))).status).to.equal(201);
      // A cancelled subscription frees it.
      expect((await api.post(`/api/v1/subscriptions/${first.body.subscriptionId}/cancel`)).status).to.equal(200);
      expect((await api.post("/api/v1/subscriptions", body({ externalReference: "order-42" }))).status).to.equal(201);
    });

    it("parallel creates with one externalReference: exactly one 201, the rest 409", async () => {
      const req = body({ externalReference: `race-${randomUUID()}` });
      const results = await Promise.all(Array.from({ length: 8 }, () => api.post("/api/v1/subscriptions", req)));
      expect(results.filter((r) => r.status === 201)).to.have.length(1);
      expect(results.filter((r) => r.status === 409 && r.body.error === "SUBSCRIPTION_ALREADY_EXISTS")).to.have.length(7);
    });
  });

  describe("Idempotency-Key", () => {
    const count = async (externalReference: string) =>
      (await api.get(`/api/v1/subscriptions?externalReference=${encodeURIComponent(externalReference)}`)).body.data.length;

    it("same key and body → the first response again (status and body), nothing created", async () => {
      const req = body();
      const key = `key-${randomUUID()}`;
      const first = await api.post("/api/v1/subscriptions", req, { "idempotency-key": key });
      expect(first.status).to.equal(201);
      const again = await api.post("/api/v1/subscriptions", { ...req }, { "idempotency-key": key });
      expect(again.status).to.equal(201);
      expect(again.body).to.deep.equal(first.body);
      expect(again.headers.get("idempotent-replayed")).to.equal("true");
      expect(await count(req.externalReference)).to.equal(1);
    });

    it("same key, different body → 409 IDEMPOTENCY_KEY_REUSED", async () => {
      const key = `key-${randomUUID()}`;
      expect((await api.post("/api/v1/subscriptions", body(), { "idempotency-key": key })).status).to.equal(201);
      const res = await api.post("/api/v1/subscriptions", body(), { "idempotency-key": key });
      expect(res.status).to.equal(409);
      expect(res.body.error).to.equal("IDEMPOTENCY_KEY_REUSED");
    });

    it("a key is scoped to the merchant", async () => {
      const key = `key-${randomUUID()}`;
      expect((await api.post("/api/v1/subscriptions", body(), { "idempotency-key": key })).status).to.equal(201);
      const theirPlan = await createPlan(other);
      const res = await other.post("/api/v1/subscriptions", subscriptionBody(theirPlan.id, customer.id), { "idempotency-key": key });
      expect(res.status).to.equal(201);
    });

    it("replays a client error too (404), without creating anything later", async () => {
      const key = `key-${randomUUID()}`;
      const req = body({ planId: randomUUID() });
      const first = await api.post("/api/v1/subscriptions", req, { "idempotency-key": key });
      expect(first.status).to.equal(404);
      const again = await api.post("/api/v1/subscriptions", req, { "idempotency-key": key });
      expect(again.status).to.equal(404);
      expect(again.body).to.deep.equal(first.body);
    });

    it("a key of 200 characters is accepted; 201 characters → 400", async () => {
      expect((await api.post("/api/v1/subscriptions", body(), { "idempotency-key": "k".repeat(200) })).status).to.equal(201);
      const res = await api.post("/api/v1/subscriptions", body(), { "idempotency-key": "k".repeat(201) });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal("INVALID_REQUEST");
      expect(res.body.message).to.include("Idempotency-Key");
    });

    it("concurrent requests with one key create one subscription; the others get 409 IDEMPOTENCY_KEY_IN_USE or the replay", async () => {
      const req = body();
      const key = `key-${randomUUID()}`;
      const results = await Promise.all(Array.from({ length: 6 }, () => api.post("/api/v1/subscriptions", req, { "idempotency-key": key })));
      const created = results.filter((r) => r.status === 201);
      const inUse = results.filter((r) => r.status === 409 && r.body.error === "IDEMPOTENCY_KEY_IN_USE");
      expect(created.length + inUse.length).to.equal(6);
      expect(inUse.length).to.be.greaterThan(0);
      expect(new Set(created.map((r) => r.body.subscriptionId)).size).to.equal(1);
      expect(await count(req.externalReference)).to.equal(1);
    });
  });

  describe("read", () => {
    it("404 SUBSCRIPTION_NOT_FOUND for unknown, malformed and another merchant's ids, on every operation", async () => {
      const mine = await createSubscription(api, plan.id, customer.id);
      for (const id of [randomUUID(), "not-a-uuid", mine.subscriptionId]) {
        const client = id === mine.subscriptionId ? other : api;
        for (const [method, path] of [
          ["GET", ""],
          ["POST", "/pause"],
          ["POST", "/resume"],
          ["POST", "/cancel"],
        ] as const) {
          const res = await client.request(method, `/api/v1/subscriptions/${id}${path}`);
          expect(res.status, `${method} ${path} ${id}`).to.equal(404);
          expect(res.body.error).to.equal("SUBSCRIPTION_NOT_FOUND");
        }
      }
      // And the other merchant's attempt changed nothing.
      expect((await api.get(`/api/v1/subscriptions/${mine.subscriptionId}`)).body.status).to.equal("PENDING_APPROVAL");
    });

    it("lists newest first with keyset pagination and filters; another merchant's are never listed", async () => {
      const m = await sys.createMerchant("Lister");
      const p1 = await createPlan(m.api);
      const p2 = await createPlan(m.api, { name: "Basic" });
      const u2 = await createWalletUser(sys);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push((await createSubscription(m.api, i % 2 ? p2.id : p1.id, i === 4 ? u2.id : customer.id, { externalReference: `L-${i}` })).subscriptionId);
      await m.api.post(`/api/v1/subscriptions/${ids[0]}/cancel`);

      const page1 = await m.api.get("/api/v1/subscriptions?limit=2");
      expect(page1.status).to.equal(200);
      expect(page1.body.data.map((s: any) => s.id)).to.deep.equal([ids[4], ids[3]]);
      expect(page1.body.hasMore).to.equal(true);
      const page2 = await m.api.get(`/api/v1/subscriptions?limit=2&cursor=${page1.body.nextCursor}`);
      expect(page2.body.data.map((s: any) => s.id)).to.deep.equal([ids[2], ids[1]]);
      const page3 = await m.api.get(`/api/v1/subscriptions?limit=2&cursor=${page2.body.nextCursor}`);
      expect(page3.body.data.map((s: any) => s.id)).to.deep.equal([ids[0]]);
      expect(page3.body).to.include({ hasMore: false, nextCursor: null });
      expect(page3.body.data[0].authorization.status).to.equal("CANCELLED");

      const ids0 = async (q: string) => (await m.api.get(`/api/v1/subscriptions?${q}`)).body.data.map((s: any) => s.id);
      expect(await ids0("status=CANCELLED")).to.deep.equal([ids[0]]);
      expect(await ids0(`planId=${p2.id}`)).to.deep.equal([ids[3], ids[1]]);
      expect(await ids0(`walletUserId=${u2.id}`)).to.deep.equal([ids[4]]);
      expect(await ids0("externalReference=L-2")).to.deep.equal([ids[2]]);
      expect(await ids0(`status=PENDING_APPROVAL&planId=${p1.id}`)).to.deep.equal([ids[4], ids[2]]);
      expect((await api.get(`/api/v1/subscriptions?walletUserId=${u2.id}`)).body.data).to.deep.equal([]);
    });

    it("400 for bad list queries", async () => {
      for (const q of ["status=SLEEPING", "planId=x", "walletUserId=1", "limit=0", "limit=101", "cursor=garbage", "colour=red"]) {
        const res = await api.get(`/api/v1/subscriptions?${q}`);
        expect(res.status, q).to.equal(400);
        expect(res.body.error).to.equal("INVALID_REQUEST");
      }
    });
  });

  describe("lifecycle before approval", () => {
    it("pause and resume of a PENDING_APPROVAL subscription → 409 INVALID_STATUS_TRANSITION naming the status", async () => {
      const s = await createSubscription(api, plan.id, customer.id);
      for (const action of ["pause", "resume"]) {
        const res = await api.post(`/api/v1/subscriptions/${s.subscriptionId}/${action}`);
        expect(res.status).to.equal(409);
        expect(res.body.error).to.equal("INVALID_STATUS_TRANSITION");
        expect(res.body.message).to.include("PENDING_APPROVAL");
      }
    });

    it("cancel → 200 CANCELLED with the updated record; the event carries the same record; cancelling again → 409", async () => {
      const s = await createSubscription(api, plan.id, customer.id);
      const res = await api.post(`/api/v1/subscriptions/${s.subscriptionId}/cancel`);
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ id: s.subscriptionId, status: "CANCELLED", cancellationReason: "MERCHANT_CANCELLED" });
      expect(res.body.cancelledAt).to.be.a("string");
      expect(res.body.authorization.status).to.equal("CANCELLED");
      const events = await eventsOf(sys, s.subscriptionId);
      expect(events.map((e) => e.type)).to.deep.equal(["subscription.created", "subscription.cancelled"]);
      expect(events[1]!.data).to.deep.equal(res.body);
      const again = await api.post(`/api/v1/subscriptions/${s.subscriptionId}/cancel`);
      expect(again.status).to.equal(409);
      expect(again.body.error).to.equal("INVALID_STATUS_TRANSITION");
      expect(again.body.message).to.include("CANCELLED");
    });
  });

  it("is documented in the OpenAPI document with the Idempotency-Key header", async () => {
    const doc = (await sys.http.get("/api/v1/openapi.json")).body;
    const create = doc.paths["/api/v1/subscriptions"].post;
    expect(create.parameters.map((p: any) => p.name)).to.include("Idempotency-Key");
    expect(Object.keys(create.responses)).to.include.members(["201", "400", "404", "409"]);
    for (const action of ["pause", "resume", "cancel"]) expect(doc.paths[`/api/v1/subscriptions/{id}/${action}`].post.responses).to.have.property("409");
  });
});

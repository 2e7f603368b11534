import { expect } from "chai";
import { useTestSystem } from "../support/system.ts";
import { hostedPage } from "../support/hosted-page.ts";
import { createPlan, createSubscription, createWalletUser, PIN } from "../support/subscriptions.ts";

const LOG = "/api/v1/audit-log";

describe("GET /api/v1/audit-log", function () {
  this.timeout(60_000);

  const sys = useTestSystem({ workerGroups: [] });

  it("a customer approving on the hosted page, then the merchant cancelling with an API key: both entries, with their actors", async () => {
    const m = await sys.createMerchant("Audit API");
    const plan = await createPlan(m.api, { amount: "10" });
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const s = await createSubscription(m.api, plan.id, user.id);
    const page = hostedPage(sys, new URL(s.authorizationUrl).pathname);
    await page.logIn(user);
    const approved = await page.post({ action: "approve", fundingAsset: "USDT_TRON", pin: PIN });
    expect(approved.status).to.equal(303);

    const cancel = await m.api.post(`/api/v1/subscriptions/${s.subscriptionId}/cancel`, {}, { "user-agent": "siem-test" });
    expect(cancel.status).to.equal(200);
    // Refused (already cancelled, the use case's transaction rolls back): no second entry.
    expect((await m.api.post(`/api/v1/subscriptions/${s.subscriptionId}/cancel`, {})).status).to.equal(409);

    const res = await m.api.get(`${LOG}?objectId=${s.subscriptionId}`);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ hasMore: false, nextCursor: null });
    expect(res.body.data.map((e: any) => e.action)).to.deep.equal(["subscription.cancel", "subscription.approve", "subscription.create"]);
    const [cancelled, approval, created] = res.body.data;
    expect(cancelled).to.have.all.keys("id", "object", "at", "actor", "action", "objectType", "objectId", "ip", "userAgent", "requestId");
    expect(cancelled).to.deep.include({
      object: "audit_entry",
      action: "subscription.cancel",
      objectType: "subscription",
      objectId: s.subscriptionId,
      actor: { type: "api_key", id: m.apiKeyId, label: m.apiKey.slice(0, 12) },
      userAgent: "siem-test",
    });
    expect(cancelled.requestId).to.equal(cancel.headers.get("x-request-id"));
    expect(approval).to.deep.include({
      action: "subscription.approve",
      objectId: s.subscriptionId,
      actor: { type: "customer", id: user.id, label: user.email },
    });
    expect(created).to.deep.include({ action: "subscription.create", actor: { type: "api_key", id: m.apiKeyId, label: m.apiKey.slice(0, 12) } });
    expect(Date.parse(cancelled.at)).to.be.at.least(Date.parse(approval.at));
  });

  it("a refund through the API names the new refund and the key", async () => {
    const m = await sys.createMerchant("Audit refunds");
    const plan = await createPlan(m.api, { amount: "10" });
    const user = await createWalletUser(sys, { USDT_TRON: "100" });
    const s = await createSubscription(m.api, plan.id, user.id);
    const page = hostedPage(sys, new URL(s.authorizationUrl).pathname);
    await page.logIn(user);
    expect((await page.post({ action: "approve", fundingAsset: "USDT_TRON", pin: PIN })).status).to.equal(303);
    const [charge] = (await m.api.get(`/api/v1/subscriptions/${s.subscriptionId}/charges`)).body.data;
    const refund = await m.api.post("/api/v1/refunds", { chargeId: charge.id, amount: "1" });
    expect(refund.status, refund.text).to.be.oneOf([200, 201]);
    const [entry] = (await m.api.get(`${LOG}?action=refund.create`)).body.data;
    expect(entry).to.deep.include({ objectType: "refund", objectId: refund.body.id, actor: { type: "api_key", id: m.apiKeyId, label: m.apiKey.slice(0, 12) } });
  });

  it("is merchant-scoped, filtered and keyset paged", async () => {
    const a = await sys.createMerchant("Audit A");
    const b = await sys.createMerchant("Audit B");
    const plans = [];
    for (let i = 0; i < 3; i++) plans.push(await createPlan(a.api, { name: `A${i}` }));
    const other = await createPlan(b.api, { name: "B" });

    const own = await a.api.get(`${LOG}?action=plan.create&limit=2`);
    expect(own.status).to.equal(200);
    expect(own.body.data.map((e: any) => e.objectId)).to.deep.equal([plans[2].id, plans[1].id]);
    expect(own.body.hasMore).to.equal(true);
    const next = await a.api.get(`${LOG}?action=plan.create&limit=2&cursor=${own.body.nextCursor}`);
    expect(next.body.data.map((e: any) => e.objectId)).to.deep.equal([plans[0].id]);
    expect(next.body.hasMore).to.equal(false);

    // Another merchant's entries are never visible, whatever the filter.
    expect((await a.api.get(`${LOG}?objectId=${other.id}`)).body.data).to.deep.equal([]);
    expect((await a.api.get(`${LOG}?actor=${b.apiKeyId}`)).body.data).to.deep.equal([]);
    const all = await a.api.get(`${LOG}?limit=100`);
    expect(all.body.data.map((e: any) => e.objectId)).not.to.include(other.id);
    expect((await a.api.get(`${LOG}?actor=${a.apiKeyId}`)).body.data).to.have.length(3);

    const future = await a.api.get(`${LOG}?from=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`);
    expect(future.body.data).to.deep.equal([]);
  });

  it("answers 400 naming the field for bad filters, 401 without a key", async () => {
    const m = await sys.createMerchant("Audit bad input");
    for (const [query, field] of [
      ["limit=0", "limit"],
      ["from=yesterday", "from"],
      ["action=DROP%20TABLE", "action"],
      ["cursor=nope", "cursor"],
      ["bogus=1", "bogus"],
    ] as const) {
      const res = await m.api.get(`${LOG}?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body.message, query).to.contain(field);
    }
    expect((await sys.http.get(LOG)).status).to.equal(401);
  });

  it("is in the OpenAPI document with its schema", async () => {
    const doc = (await sys.http.get("/api/v1/openapi.json")).body;
    const op = doc.paths["/api/v1/audit-log"].get;
    expect(op.operationId).to.equal("listAuditLog");
    expect(JSON.stringify(op.responses["200"])).to.contain("audit_entry");
  });
});

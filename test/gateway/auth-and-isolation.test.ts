import { expect } from "chai";
import { startTestSystem, useTestSystem } from "../support/system.ts";
import { apiClient } from "../support/http.ts";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

const PLANS = "/api/v1/subscription-plans";
const plan = { name: "Basic", amount: "5", currency: "USD", interval: "WEEK" };

describe("API keys and tenant isolation", () => {
  const sys = useTestSystem({ workerGroups: [] });

  it("answers 401 INVALID_API_KEY for a missing, malformed or unknown key", async () => {
    const variants: Record<string, string>[] = [{}, { "x-api-key": "nope" }, { "x-api-key": `sk_test_${"A".repeat(43)}` }];
    for (const headers of variants) {
      for (const res of [await sys.http.get(PLANS, headers), await sys.http.post(PLANS, plan, headers)]) {
        expect(res.status).to.equal(401);
        expect(res.body.error).to.equal("INVALID_API_KEY");
        expect(res.body.message).to.be.a("string").and.not.empty;
      }
    }
  });

  it("issues keys with a recognisable prefix, stores only their hash, and a revoked key answers 401", async () => {
    const m = await sys.createMerchant("Revoker");
    expect(m.apiKey).to.match(/^sk_test_[A-Za-z0-9_-]{43}$/);
    const stored = await sys.sql("select key_hash, prefix from api_keys where merchant_id = ?", [m.id]);
    expect(stored).to.have.length(1);
    expect(stored[0].key_hash).to.match(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.to.contain(m.apiKey);

    const second = await sys.admin.post(`/admin/v1/merchants/${m.id}/api-keys`);
    expect(second.status).to.equal(201);
    expect(second.body.apiKey).to.match(/^sk_test_/);
    const api2 = apiClient(sys.baseUrl, { "x-api-key": second.body.apiKey });
    expect((await api2.get(PLANS)).status).to.equal(200);

    const revoked = await sys.admin.delete(`/admin/v1/merchants/${m.id}/api-keys/${m.apiKeyId}`);
    expect(revoked.status).to.equal(204);
    expect(revoked.text).to.equal("");
    const afterRevoke = await m.api.get(PLANS);
    expect(afterRevoke.status).to.equal(401);
    expect(afterRevoke.body.error).to.equal("INVALID_API_KEY");
    // The other key of the same merchant keeps working.
    expect((await api2.get(PLANS)).status).to.equal(200);
  });

  it("a key revoked from the CLI stops working at once although the gateway cached it", async () => {
    const m = await sys.createMerchant("Cached");
    // Warm the gateway's lookup cache.
    for (let i = 0; i < 3; i++) expect((await m.api.get(PLANS)).status).to.equal(200);
    const env = { ...process.env, DATABASE_URL: sys.database.url, REDIS_URL: sys.config.redisUrl, QUEUE_PREFIX: sys.config.queuePrefix, LOG_LEVEL: "silent" };
    await run(process.execPath, ["cli/billing.ts", "api-keys", "revoke", "--merchant", m.id, "--key", m.apiKeyId, "--json"], { env });
    const res = await m.api.get(PLANS);
    expect(res.status).to.equal(401);
    expect(res.body.error).to.equal("INVALID_API_KEY");
  });

  it("answers 404 for another merchant's plan, never the record", async () => {
    const a = await sys.createMerchant("A");
    const b = await sys.createMerchant("B");
    const created = await a.api.post(PLANS, plan);
    const asB = await b.api.get(`${PLANS}/${created.body.id}`);
    expect(asB.status).to.equal(404);
    expect(asB.body).to.deep.equal({ error: "PLAN_NOT_FOUND", message: asB.body.message });
    expect(asB.text).not.to.contain("Basic");
    const bList = await b.api.get(PLANS);
    expect(bList.body.data).to.deep.equal([]);
    expect((await a.api.get(`${PLANS}/${created.body.id}`)).status).to.equal(200);
  });

  describe("operator API", () => {
    it("needs X-ADMIN-KEY", async () => {
      const none = await sys.http.post("/admin/v1/merchants", { name: "X" });
      expect(none.status).to.equal(401);
      expect(none.body.error).to.equal("INVALID_ADMIN_KEY");
      const wrong = await sys.http.post("/admin/v1/merchants", { name: "X" }, { "x-admin-key": "wrong-wrong-wrong-wrong" });
      expect(wrong.status).to.equal(401);
    });

    it("creates a merchant with {id, name, apiKey} and validates the name", async () => {
      const res = await sys.admin.post("/admin/v1/merchants", { name: "Acme" });
      expect(res.status).to.equal(201);
      expect(res.body).to.include.keys("id", "name", "apiKey");
      expect(res.body.name).to.equal("Acme");
      const bad = await sys.admin.post("/admin/v1/merchants", { name: "" });
      expect(bad.status).to.equal(400);
      expect(bad.body.message).to.contain("name");
      const missing = await sys.admin.post(`/admin/v1/merchants/00000000-0000-4000-8000-000000000000/api-keys`);
      expect(missing.status).to.equal(404);
      expect(missing.body.error).to.equal("MERCHANT_NOT_FOUND");
      const missingKey = await sys.admin.delete(`/admin/v1/merchants/${res.body.id}/api-keys/00000000-0000-4000-8000-000000000000`);
      expect(missingKey.status).to.equal(404);
    });

    it("is disabled (404) when ADMIN_API_KEY is unset", async () => {
      const off = await startTestSystem({ workerGroups: [], env: { ADMIN_API_KEY: "" } });
      try {
        const res = await off.http.post("/admin/v1/merchants", { name: "X" }, { "x-admin-key": "anything-at-all-here" });
        expect(res.status).to.equal(404);
        expect(res.body.error).to.equal("NOT_FOUND");
      } finally {
        await off.close();
      }
    });
  });
});

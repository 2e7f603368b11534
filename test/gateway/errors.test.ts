import { expect } from "chai";
import { startTestSystem, useTestSystem } from "../support/system.ts";
import { apiClient, type ApiClient } from "../support/http.ts";
import { loadConfig } from "../../services/platform/config.ts";
import { createLogger } from "../../services/platform/logger.ts";
import { startGateway } from "../../gateway/start-gateway.ts";
import { serviceCheck } from "../../services/platform/health/readiness.ts";

const PLANS = "/api/v1/subscription-plans";

/** Every error status answers the error body, and nothing leaks. */
describe("error responses", () => {
  let api: ApiClient;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    api = (await sys.createMerchant()).api;
  });

  function expectErrorBody(res: { status: number; body: any; headers: Headers }, status: number, code: string) {
    expect(res.status).to.equal(status);
    expect(res.headers.get("content-type")).to.contain("application/json");
    expect(res.body.error).to.equal(code);
    expect(res.body.message).to.be.a("string").and.not.empty;
    expect(JSON.stringify(res.body)).not.to.match(/at .*\.ts:\d+|select |insert |stack/i);
  }

  it("malformed JSON → 400 MALFORMED_JSON", async () => {
    const res = await api.request("POST", PLANS, { raw: '{"name":', headers: { "content-type": "application/json" } });
    expectErrorBody(res, 400, "MALFORMED_JSON");
  });

  it("a JSON body that is not an object → 400 naming the body", async () => {
    const res = await api.request("POST", PLANS, { raw: "[1,2]", headers: { "content-type": "application/json" } });
    expectErrorBody(res, 400, "INVALID_REQUEST");
  });

  it("a non-JSON content type → 415", async () => {
    const res = await api.request("POST", PLANS, { raw: "name=x", headers: { "content-type": "text/plain" } });
    expectErrorBody(res, 415, "UNSUPPORTED_MEDIA_TYPE");
    const form = await api.request("POST", PLANS, { raw: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expectErrorBody(form, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("a body over the limit → 413", async () => {
    const res = await api.post(PLANS, { name: "x", amount: "1", currency: "USD", interval: "DAY", metadata: { blob: "x".repeat(200_000) } });
    expectErrorBody(res, 413, "PAYLOAD_TOO_LARGE");
  });

  it("an unknown route → 404 with the error body", async () => {
    expectErrorBody(await api.get("/api/v1/nothing-here"), 404, "NOT_FOUND");
    expectErrorBody(await sys.http.get("/"), 404, "NOT_FOUND");
  });

  it("a wrong method on a known path → 405 with the error body", async () => {
    expectErrorBody(await api.request("PUT", PLANS, { body: {} }), 405, "METHOD_NOT_ALLOWED");
  });

  it("a failing dependency → 500 INTERNAL_ERROR without details, then recovers", async () => {
    const lone = await startTestSystem({ workerGroups: [] });
    try {
      const m = await lone.createMerchant();
      // Break the plans table underneath the service: the failure must not leak SQL.
      await lone.sql("alter table plans rename to plans_gone");
      const res = await m.api.post(PLANS, { name: "x", amount: "1", currency: "USD", interval: "DAY" });
      expectErrorBody(res, 500, "INTERNAL_ERROR");
      expect(res.body.message).to.equal("internal error");
      await lone.sql("alter table plans_gone rename to plans");
      expect((await m.api.post(PLANS, { name: "x", amount: "1", currency: "USD", interval: "DAY" })).status).to.equal(201);
    } finally {
      await lone.close();
    }
  });

  it("text Postgres cannot store (NUL, unpaired surrogates) or metadata nested too deeply → 400 naming the field, never 500", async () => {
    const plan = { name: "x", amount: "1", currency: "USD", interval: "DAY" };
    const nulName = await api.post(PLANS, { ...plan, name: "a\u0000b" });
    expectErrorBody(nulName, 400, "INVALID_REQUEST");
    expect(nulName.body.message).to.contain("name");
    const nulKey = await api.post(PLANS, { ...plan, metadata: { "a\u0000": 1 } });
    expectErrorBody(nulKey, 400, "INVALID_REQUEST");
    expect(nulKey.body.message).to.contain("metadata");
    const nulValue = await api.post(PLANS, { ...plan, metadata: { a: { b: ["ok", "\u0000"] } } });
    expectErrorBody(nulValue, 400, "INVALID_REQUEST");
    expect(nulValue.body.message).to.contain("metadata.a.b.1");
    const surrogate = await api.request("POST", PLANS, {
      raw: '{"name":"x","amount":"1","currency":"USD","interval":"DAY","metadata":{"a":"\\udc00"}}',
      headers: { "content-type": "application/json" },
    });
    expectErrorBody(surrogate, 400, "INVALID_REQUEST");
    expect(surrogate.body.message).to.contain("metadata.a");
    const deep = await api.request("POST", PLANS, {
      raw: JSON.stringify(plan).slice(0, -1) + ',"metadata":' + '{"a":'.repeat(5000) + "1" + "}".repeat(5000) + "}",
      headers: { "content-type": "application/json" },
    });
    expectErrorBody(deep, 400, "INVALID_REQUEST");
    expect(deep.body.message).to.contain("metadata");
    const webhook = await api.post("/api/v1/webhook-endpoints", { url: "https://example.com/h", description: "\u0000" });
    expectErrorBody(webhook, 400, "INVALID_REQUEST");
    expectErrorBody(await sys.admin.post("/admin/v1/merchants", { name: "\u0000" }), 400, "INVALID_REQUEST");
    const query = await api.get(`${PLANS}?externalReference=%00`);
    expectErrorBody(query, 400, "INVALID_REQUEST");
    expect(query.body.message).to.contain("externalReference");
    expectErrorBody(await api.get("/api/v1/payment-orders/by-external-id/%00"), 400, "INVALID_REQUEST");
    // Unicode that is well formed is stored and returned as given.
    const fine = await api.post(PLANS, { ...plan, name: "Ünïcødé 😀", metadata: { clé: "värde 😀" } });
    expect(fine.status).to.equal(201);
    expect(fine.body.metadata).to.deep.equal({ clé: "värde 😀" });
  });

  it("health and readiness need no key", async () => {
    const health = await sys.http.get("/healthz");
    expect(health.status).to.equal(200);
    const ready = await sys.http.get("/readyz");
    expect(ready.status).to.equal(200);
    expect(ready.body.checks).to.deep.equal({
      redis: "ok",
      merchants: "ok",
      catalog: "ok",
      wallet: "ok",
      subscriptions: "ok",
      orders: "ok",
      payouts: "ok",
      events: "ok",
      sandbox: "ok",
    });
    // The services process answers its own probe on the RPC port (its pool and Redis).
    const services = await serviceCheck(`http://127.0.0.1:${sys.system.servicesPort}`, 2_000)();
    expect(services).to.equal("ok");
  });

  it("readiness answers 503 naming Redis or a service it calls when it is unreachable (liveness stays 200)", async () => {
    // Port 1 on loopback refuses at once: a dependency that is down.
    const services = `http://127.0.0.1:${sys.system.servicesPort}`;
    for (const [env, down] of [
      [{ REDIS_URL: "redis://127.0.0.1:1", SUBSCRIPTIONS_SERVICE_URL: services }, "redis"],
      [{ REDIS_URL: sys.config.redisUrl, SUBSCRIPTIONS_SERVICE_URL: "http://127.0.0.1:1" }, "subscriptions"],
    ] as const) {
      const gateway = await startGateway(loadConfig({ ...env, LOG_LEVEL: "silent" }), createLogger("silent"), 0);
      try {
        const http = apiClient(`http://127.0.0.1:${gateway.port}`);
        const ready = await http.get("/readyz");
        expect(ready.status, down).to.equal(503);
        expect(ready.body.status).to.equal("not_ready");
        expect(ready.body.checks[down]).to.match(/^unreachable/);
        expect((await http.get("/healthz")).status).to.equal(200);
      } finally {
        await gateway.close();
      }
    }
  });

  it("an unreachable service → 503 without internal addresses; a gateway with the wrong service token → 500, not 401", async () => {
    const merchant = await sys.createMerchant();
    const services = `http://127.0.0.1:${sys.system.servicesPort}`;
    const urls = (url: string) =>
      Object.fromEntries(["MERCHANTS", "CATALOG", "WALLET", "SUBSCRIPTIONS", "ORDERS", "EVENTS", "SANDBOX"].map((s) => [`${s}_SERVICE_URL`, url]));
    const base = { DATABASE_URL: sys.config.databaseUrl, REDIS_URL: sys.config.redisUrl, LOG_LEVEL: "silent" };
    for (const [env, status, code] of [
      [{ ...base, ...urls("http://127.0.0.1:1") }, 503, "SERVICE_UNAVAILABLE"],
      [{ ...base, ...urls(services), INTERNAL_API_TOKEN: "not-the-services-token" }, 500, "INTERNAL_ERROR"],
    ] as const) {
      const gateway = await startGateway(loadConfig(env), createLogger("silent"), 0);
      try {
        const res = await apiClient(`http://127.0.0.1:${gateway.port}`, { "x-api-key": merchant.apiKey }).get(PLANS);
        expectErrorBody(res, status, code);
        expect(res.body.message).not.to.match(/127\.0\.0\.1|ECONNREFUSED|token/);
      } finally {
        await gateway.close();
      }
    }
  });
});

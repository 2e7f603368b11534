import { expect } from "chai";
import { startTestSystem, type TestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";

const PLANS = "/api/v1/subscription-plans";

/** Every error status answers the error body, and nothing leaks. */
describe("error responses", () => {
  let sys: TestSystem;
  let api: ApiClient;

  before(async () => {
    sys = await startTestSystem({ workerGroups: [] });
    api = (await sys.createMerchant()).api;
  });
  after(async () => sys?.close());

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

  it("health and readiness need no key", async () => {
    const health = await sys.http.get("/healthz");
    expect(health.status).to.equal(200);
    const ready = await sys.http.get("/readyz");
    expect(ready.status).to.equal(200);
    expect(ready.body.checks).to.deep.equal({ postgres: "ok", redis: "ok" });
  });
});

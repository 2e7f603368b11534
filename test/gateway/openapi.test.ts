import { expect } from "chai";
import { execFile } from "node:child_process";
import { mkdtemp, writeFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { useTestSystem } from "../support/system.ts";
import { allRoutes } from "../../gateway/routes/index.ts";

const run = promisify(execFile);

describe("OpenAPI document", () => {
  let doc: any;

  const sys = useTestSystem({ workerGroups: [], services: ["merchants"] });
  before(async () => {
    const res = await sys.http.get("/api/v1/openapi.json");
    expect(res.status).to.equal(200);
    doc = res.body;
  });

  it("is OpenAPI 3.1 with the interface version 1.1.0 and needs no key", () => {
    expect(doc.openapi).to.equal("3.1.0");
    expect(doc.info.version).to.equal("1.1.0");
  });

  it("describes every mounted REST operation, with the very schemas that validate it", () => {
    for (const route of allRoutes) {
      const op = doc.paths[route.path.replace(/:(\w+)/g, "{$1}")]?.[route.method];
      expect(op, `${route.method} ${route.path}`).to.be.an("object");
      expect(op.operationId).to.equal(route.operationId);
      if (route.body) {
        const schema = op.requestBody.content["application/json"].schema;
        expect(schema.properties).to.have.keys(Object.keys((route.body as any).properties));
        expect(schema.required ?? []).to.deep.equal((route.body as any).required ?? []);
      }
      for (const status of Object.keys(route.responses)) expect(op.responses).to.have.property(status);
      if (route.auth !== "none") expect(op.responses["401"].content["application/json"].schema.$ref).to.equal("#/components/schemas/Error");
    }
    const plan = doc.paths["/api/v1/subscription-plans"].post.requestBody.content["application/json"].schema;
    expect(plan.properties.amount.pattern).to.equal("^\\d+(\\.\\d{1,18})?$");
    expect(plan.properties.intervalCount).to.include({ minimum: 1, maximum: 365, default: 1 });
  });

  it("lints clean with @redocly/cli", async function () {
    this.timeout(60_000);
    const dir = await mkdtemp(path.join(os.tmpdir(), "openapi-"));
    try {
      const file = path.join(dir, "openapi.json");
      await writeFile(file, JSON.stringify(doc));
      const { stdout, stderr } = await run(path.resolve("node_modules/.bin/redocly"), ["lint", file, "--format", "stylish"], {
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      }).catch((err) => ({ stdout: String(err.stdout), stderr: `${err.stderr}\nexit ${err.code}` }));
      const output = `${stdout}\n${stderr}`;
      expect(output, output).not.to.match(/error|warning/i);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("lists the 400 that operations without a body schema really answer (a body that is not JSON)", async () => {
    const { api } = await sys.createMerchant();
    const id = "00000000-0000-4000-8000-000000000000";
    for (const [path, template] of [
      [`/api/v1/subscriptions/${id}/pause`, "/api/v1/subscriptions/{id}/pause"],
      [`/api/v1/subscriptions/${id}/cancel`, "/api/v1/subscriptions/{id}/cancel"],
      [`/api/v1/webhook-endpoints/${id}/rotate-secret`, "/api/v1/webhook-endpoints/{id}/rotate-secret"],
    ]) {
      const res = await api.request("POST", path!, { raw: "{not json", headers: { "content-type": "application/json" } });
      expect(res.status, path).to.equal(400);
      expect(doc.paths[template!].post.responses).to.include.keys("400", "401", "404", "413", "429", "500", "503");
    }
  });

  it("documents the rate-limit headers on merchant operations", () => {
    const list = doc.paths["/api/v1/subscription-plans"].get.responses;
    expect(list["200"].headers).to.have.keys("RateLimit", "RateLimit-Policy");
    expect(list["429"].headers).to.include.keys("Retry-After");
    expect(doc.paths["/admin/v1/merchants/{id}"].patch.requestBody.content["application/json"].schema.properties).to.have.keys(
      "rateLimitPerSecond",
      "rateLimitBurst",
      "payoutReviewAbove",
      "receiptPrefix",
    );
  });
});

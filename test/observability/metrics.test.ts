import { expect } from "chai";
import { spawn } from "node:child_process";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { startTestSystem, useTestSystem } from "../support/system.ts";
import { startSystem } from "../../cli/system.ts";
import { createLogger } from "../../services/platform/logger.ts";
import { scrape } from "../support/prometheus.ts";
import { createPlan, createSubscription, createWalletUser, subscriptionsRpc } from "../support/subscriptions.ts";
import { eventually } from "../support/eventually.ts";
import { advanceBy, approvedSubscription, DAY, waitForCharges } from "../support/billing.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";

const SUBSCRIPTIONS_RPC = "billing.subscriptions.v1.SubscriptionsService";
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-/i;

/** /metrics of the all-in-one process, scraped with a Prometheus text parser, moving after real actions. */
describe("operations: Prometheus metrics", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;
  let receiver: WebhookReceiver;

  const sys = useTestSystem({ env: { WEBHOOK_RETRY_SCHEDULE: "60", WEBHOOK_TIMEOUT_MS: "300" } });
  before(async () => {
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    rpc?.close();
    await receiver?.close();
  });

  const metrics = () => scrape(sys.system.metricsPort!);

  it("serves /healthz and /readyz beside /metrics, apart from the public port", async () => {
    expect(sys.system.metricsPort).to.be.a("number").and.not.equal(sys.system.gatewayPort);
    const health = await fetch(`http://127.0.0.1:${sys.system.metricsPort}/healthz`);
    expect(health.status).to.equal(200);
    const ready = await fetch(`http://127.0.0.1:${sys.system.metricsPort}/readyz`);
    expect(ready.status).to.equal(200);
    expect(((await ready.json()) as any).checks).to.include({ postgres: "ok", redis: "ok" });
  });

  it("has Node's process metrics and the pool gauge", async () => {
    const m = await metrics();
    for (const name of ["process_resident_memory_bytes", "nodejs_eventloop_lag_seconds", "nodejs_gc_duration_seconds"]) {
      expect(m.families.has(name), name).to.equal(true);
    }
    expect(m.value("process_resident_memory_bytes")).to.be.greaterThan(0);
    expect(
      m
        .labelSets("billing_db_pool_connections")
        .map((l) => l.state)
        .sort(),
    ).to.deep.equal(["idle", "used", "waiting"]);
    expect(m.value("billing_db_pool_connections", { state: "idle" }) + m.value("billing_db_pool_connections", { state: "used" })).to.be.greaterThan(0);
    expect(m.labelSets("billing_queue_jobs")).to.have.length(20); // 5 queues × waiting, delayed, active, failed
  });

  it("billing_heap_live_bytes is what the last full collection kept: it follows what the process keeps, not its garbage", async () => {
    const m = await metrics();
    expect(m.value("billing_heap_live_bytes")).to.be.greaterThan(0);
    // In a process of its own (with gc exposed): 200,000 objects kept, collected, then let go and collected again.
    const script = `
      import { createMetrics } from ${JSON.stringify(new URL("../../services/platform/observability/metrics.ts", import.meta.url).href)};
      const m = createMetrics();
      const live = async () => { await new Promise((r) => setTimeout(r, 50)); return Number(/^billing_heap_live_bytes (\\S+)$/m.exec(await m.registry.metrics())[1]); };
      let keep = Array.from({ length: 200000 }, (_, i) => ({ i, s: "x" + i }));
      globalThis.gc();
      const kept = await live();
      keep = null;
      globalThis.gc();
      console.log(JSON.stringify({ kept, after: await live() }));
      process.exit(0);`;
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
      let text = "";
      child.stdout.on("data", (d) => (text += d));
      child.on("error", reject);
      child.on("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}`))));
    });
    const { kept, after } = JSON.parse(out.trim()) as { kept: number; after: number };
    expect(kept - after, "the 200,000 objects let go").to.be.greaterThan(5 * 2 ** 20);
  });

  it("the exposition passes Prometheus' own linter (promtool check metrics)", async function () {
    const m = await metrics();
    const result = await new Promise<{ code: number | null; output: string } | undefined>((resolve) => {
      const child = spawn("promtool", ["check", "metrics"]);
      let output = "";
      child.stdout.on("data", (c: Buffer) => (output += c));
      child.stderr.on("data", (c: Buffer) => (output += c));
      child.on("error", () => resolve(undefined));
      child.on("close", (code) => resolve({ code, output }));
      child.stdin.end(m.text);
    });
    if (!result) return process.env.CI ? expect.fail("promtool is missing") : this.skip();
    // prom-client's own default gauges nodejs_active_*_total are the only names it objects to.
    const problems = result.output.split("\n").filter((l) => l.trim() && !/^nodejs_active_\w+_total non-counter metrics/.test(l));
    expect(problems).to.deep.equal([]);
  });

  it("a create moves the HTTP and RPC histograms, labelled by route template and code name", async () => {
    const merchant = await sys.createMerchant("Metrics");
    const httpLabels = { http_request_method: "POST", http_route: "/api/v1/subscriptions", http_response_status_code: "201" };
    const rpcLabels = { rpc_service: SUBSCRIPTIONS_RPC, rpc_method: "CreateSubscription", rpc_status_code: "OK" };
    const before = await metrics();
    const plan = await createPlan(merchant.api);
    const user = await createWalletUser(sys);
    await createSubscription(merchant.api, plan.id, user.id);
    const missing = await merchant.api.get("/api/v1/subscriptions/00000000-0000-4000-8000-000000000000");
    expect(missing.status).to.equal(404);

    const after = await metrics();
    expect(after.value("http_server_request_duration_seconds", httpLabels) - before.value("http_server_request_duration_seconds", httpLabels)).to.equal(1);
    expect(after.value("rpc_server_call_duration_seconds", rpcLabels) - before.value("rpc_server_call_duration_seconds", rpcLabels)).to.equal(1);
    expect(after.value("http_server_request_duration_seconds", { http_route: "/api/v1/subscriptions/:id", http_response_status_code: "404" })).to.be.at.least(
      1,
    );
    expect(after.value("rpc_server_call_duration_seconds", { rpc_method: "GetSubscription", rpc_status_code: "NOT_FOUND" })).to.be.at.least(1);
    expect(after.families.get("http_server_request_duration_seconds")!.type).to.equal("HISTOGRAM");
    // Bounded labels: templates, never a path with an id in it.
    for (const labels of after.labelSets("http_server_request_duration_seconds")) expect(labels.http_route).not.to.match(UUID);
  });

  it("a body the parser refuses (malformed JSON, 413) keeps its route template in http_route; an unknown path stays unmatched", async () => {
    const merchant = await sys.createMerchant("Bodies");
    const json = { "content-type": "application/json" };
    const cases = [
      { method: "POST", path: "/api/v1/subscription-plans", raw: "{not json", route: "/api/v1/subscription-plans", status: 400 },
      {
        method: "POST",
        path: "/api/v1/subscriptions/00000000-0000-4000-8000-000000000000/discount",
        raw: "{",
        route: "/api/v1/subscriptions/:id/discount",
        status: 400,
      },
      {
        method: "POST",
        path: "/api/v1/subscription-plans",
        raw: JSON.stringify({ name: "x".repeat(200_000) }),
        route: "/api/v1/subscription-plans",
        status: 413,
      },
      // A hosted page's form, parsed by the same parser (another router).
      { method: "POST", path: "/claims/no-such-token", raw: `a=${"x".repeat(200_000)}`, route: "/claims/:token", status: 413, form: true },
      { method: "POST", path: "/api/v1/no-such-route", raw: "{not json", route: "unmatched", status: 400 },
    ];
    for (const c of cases) {
      const labels = { http_request_method: c.method, http_route: c.route, http_response_status_code: String(c.status) };
      const before = (await metrics()).value("http_server_request_duration_seconds", labels);
      const headers = c.form ? { "content-type": "application/x-www-form-urlencoded" } : json;
      const res = await merchant.api.request(c.method, c.path, { raw: c.raw, headers });
      expect(res.status, `${c.path} ${c.raw.slice(0, 10)}`).to.equal(c.status);
      const after = (await metrics()).value("http_server_request_duration_seconds", labels);
      expect(after - before, `${c.method} ${c.path} as ${c.route}`).to.equal(1);
    }
  });

  it("a first payment and a renewal count as charges; the renewal job's duration is recorded", async () => {
    const merchant = await sys.createMerchant("Charges");
    const before = await metrics();
    const { subscriptionId } = await approvedSubscription(sys, merchant.api, client, { plan: { amount: "5", interval: "DAY" } });
    await advanceBy(sys, DAY + 60);
    await waitForCharges(sys, subscriptionId, 2);

    const first = { kind: "first", outcome: "succeeded", reason: "none" };
    const renewal = { kind: "renewal", outcome: "succeeded", reason: "none" };
    const job = { job_name: "renewals.renew-batch", outcome: "completed" };
    const after = await eventually(async () => {
      const m = await metrics();
      return m.value("billing_job_duration_seconds", job) > before.value("billing_job_duration_seconds", job) ? m : undefined;
    });
    expect(after.value("billing_charges_total", first) - before.value("billing_charges_total", first)).to.equal(1);
    expect(after.value("billing_charges_total", renewal) - before.value("billing_charges_total", renewal)).to.be.at.least(1);
  });

  it("a refused first payment counts as a failed charge with its reason", async () => {
    const merchant = await sys.createMerchant("Poor");
    const labels = { kind: "first", outcome: "failed", reason: "insufficient_funds" };
    const before = await metrics();
    await approvedSubscription(sys, merchant.api, client, { plan: { amount: "50" }, credits: { USDT_TRON: "1" } }).catch(() => undefined);
    const after = await metrics();
    expect(after.value("billing_charges_total", labels) - before.value("billing_charges_total", labels)).to.equal(1);
  });

  it("webhook attempts count by outcome: 2xx, an answered 500, a timeout, a closed port", async () => {
    const merchant = await sys.createMerchant("Hooks");
    receiver.respond = (req) =>
      req.path.endsWith("/failing") ? { status: 500 } : req.path.endsWith("/slow") ? { status: 200, delayMs: 2000 } : { status: 200 };
    const closedPort = await freePort();
    for (const url of [`${receiver.url}/ok`, `${receiver.url}/failing`, `${receiver.url}/slow`, `http://127.0.0.1:${closedPort}/nobody`]) {
      const res = await merchant.api.post("/api/v1/webhook-endpoints", { url });
      expect(res.status).to.equal(201);
    }
    const before = await metrics();
    await createPlan(merchant.api); // records an event every endpoint of this merchant receives
    const outcomes = ["succeeded", "failed", "timeout", "refused"];
    await eventually(
      async () => {
        const m = await metrics();
        const moved = (outcome: string) => m.value("billing_webhook_attempts_total", { outcome }) > before.value("billing_webhook_attempts_total", { outcome });
        return outcomes.every(moved) ? true : undefined;
      },
      20_000,
      "an attempt of every outcome",
    );
    const m = await metrics();
    expect(
      m
        .labelSets("billing_webhook_attempts_total")
        .map((l) => l.outcome)
        .sort(),
    ).to.deep.equal([...outcomes].sort());
  });
});

describe("operations: due-work lag and queue depth", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;

  // Worker groups run but have no job handlers: nothing due is ever done.
  const sys = useTestSystem({ jobs: [] });
  before(async () => {
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  it("a renewal left undone raises billing_due_work_lag_seconds{kind=renewal}; other kinds stay 0", async () => {
    const merchant = await sys.createMerchant("Lagging");
    const before = await scrape(sys.system.metricsPort!);
    expect(
      before
        .labelSets("billing_due_work_lag_seconds")
        .map((l) => l.kind)
        .sort(),
    ).to.deep.equal([
      "authorization_expiry",
      "customer_email",
      "event_relay",
      "order_expiry",
      "payout_call",
      "payout_chain_check",
      "plan_change",
      "refund_claim_expiry",
      "renewal",
      "webhook_delivery",
    ]);
    expect(before.value("billing_due_work_lag_seconds", { kind: "renewal" })).to.equal(0);
    await approvedSubscription(sys, merchant.api, rpc.client, { plan: { amount: "5", interval: "DAY" } });
    await advanceBy(sys, DAY + 3600);

    const after = await scrape(sys.system.metricsPort!);
    expect(after.value("billing_due_work_lag_seconds", { kind: "renewal" })).to.be.within(3600, 3600 + 120);
    expect(after.value("billing_due_work_lag_seconds", { kind: "order_expiry" })).to.equal(0);
  });

  it("a job that fails shows in billing_queue_jobs{state=failed} and billing_job_duration_seconds{outcome=failed}", async () => {
    await sys.system.queues!.queue("payments").add("payments.no-such-job", {}, { attempts: 1 });
    const m = await eventually(async () => {
      const s = await scrape(sys.system.metricsPort!);
      return s.value("billing_queue_jobs", { queue: "payments", state: "failed" }) >= 1 ? s : undefined;
    });
    expect(m.value("billing_job_duration_seconds", { job_name: "unknown", outcome: "failed" })).to.be.at.least(1);
  });
});

describe("operations: every role serves the operations port", () => {
  for (const [role, parts] of [
    ["gateway", { services: [], gateway: true, workerGroups: [] }],
    ["services", { services: ["catalog", "merchants"], gateway: false, workerGroups: [] }],
    ["a worker group", { services: [], gateway: false, workerGroups: ["webhooks"] }],
  ] as const) {
    it(`${role}: /metrics, /healthz, /readyz`, async () => {
      const sys = await startTestSystem(parts);
      try {
        const base = `http://127.0.0.1:${sys.system.metricsPort}`;
        const m = await scrape(sys.system.metricsPort!);
        expect(m.families.has("process_resident_memory_bytes")).to.equal(true);
        expect((await fetch(`${base}/healthz`)).status).to.equal(200);
        const ready = await fetch(`${base}/readyz`);
        if (role === "gateway") {
          // A gateway alone: Redis is there, the services it calls are not, and /readyz says so.
          expect(ready.status).to.equal(503);
          const body = (await ready.json()) as { checks: Record<string, string> };
          expect(body.checks.redis).to.equal("ok");
          expect(body.checks.catalog).to.not.equal("ok");
        } else {
          expect(ready.status).to.equal(200);
        }
        if (role === "a worker group") {
          expect(
            m
              .labelSets("billing_due_work_lag_seconds")
              .map((l) => l.kind)
              .sort(),
          ).to.deep.equal(["event_relay", "webhook_delivery"]);
        }
      } finally {
        await sys.close();
      }
    });
  }
});

describe("operations: a busy METRICS_PORT", () => {
  it("the role still starts, without an operations port", async () => {
    const holder = await startTestSystem({ services: [], workerGroups: [] });
    try {
      const busy = holder.system.metricsPort!;
      const second = await startSystem(holder.config, createLogger("silent"), {
        services: [],
        gateway: true,
        workerGroups: [],
        gatewayPort: 0,
        metricsPort: busy,
      });
      try {
        expect(second.metricsPort).to.equal(undefined);
        expect((await fetch(`http://127.0.0.1:${second.gatewayPort}/healthz`)).status).to.equal(200);
      } finally {
        await second.close();
      }
    } finally {
      await holder.close();
    }
  });
});

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

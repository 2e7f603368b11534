import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { infrastructure } from "../support/infrastructure.ts";
import { apiClient } from "../support/http.ts";
import { eventually } from "../support/eventually.ts";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ADMIN_KEY = "trace-admin-key-0123456789";
const SERVER = 2;
const CLIENT = 3;

/**
 * `node --import …/register.ts cli/billing.ts start all` as its own
 * process, exporting OTLP/HTTP JSON to a receiver in this test: one REST call
 * with a caller's traceparent gives one trace through gateway, Connect,
 * services, PostgreSQL, and the job it enqueued.
 */
describe("operations: OpenTelemetry traces", () => {
  let receiver: OtlpReceiver;
  let database: TestDatabase;
  let child: ChildProcess | undefined;
  const logLines: any[] = [];
  let port: number;

  before(async function () {
    this.timeout(60_000);
    receiver = await startOtlpReceiver();
    database = await createTestDatabase();
    const { redisUrl } = await infrastructure();
    port = (await freePorts(1))[0]!;
    child = spawn(process.execPath, ["--import", "./services/platform/observability/register.ts", "cli/billing.ts", "start", "all"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
      env: {
        PATH: process.env.PATH ?? "",
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: `tr${randomBytes(4).toString("hex")}`,
        ADMIN_API_KEY: ADMIN_KEY,
        SANDBOX: "true",
        PORT: String(port),
        SERVICES_PORT: "0",
        METRICS_PORT: "0",
        // The access log line (debug) is written inside the request's span.
        LOG_LEVEL: "debug",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "billing-trace-test",
        OTEL_BSP_SCHEDULE_DELAY: "100",
        OTEL_METRICS_EXPORTER: "none",
        OTEL_LOGS_EXPORTER: "none",
      },
    });
    let buffered = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) logLines.push(JSON.parse(line));
    });
    await eventually(
      async () =>
        (await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        )) || undefined,
      45_000,
      "the traced process to listen",
    );
  });

  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    await receiver?.close();
    await database?.drop();
  });

  it("one trace: the caller's traceparent → gateway → Connect → services → pg → the job it enqueued", async () => {
    const admin = apiClient(`http://127.0.0.1:${port}`, { "x-admin-key": ADMIN_KEY });
    const user = await admin.post("/admin/v1/wallet-users", {
      email: `t-${randomBytes(4).toString("hex")}@example.com`,
      password: "correct horse battery",
      pin: "246810",
    });
    expect(user.status).to.equal(201);

    const traceId = randomBytes(16).toString("hex");
    const callerSpanId = randomBytes(8).toString("hex");
    // A credit enqueues renewals.account-credited (retry what the new balance can pay).
    const credited = await admin.post(
      `/admin/v1/wallet-users/${user.body.id}/credits`,
      { asset: "USDT_TRON", amount: "25" },
      { traceparent: `00-${traceId}-${callerSpanId}-01` },
    );
    expect(credited.status).to.equal(201);

    const spans = await eventually(
      async () => {
        const inTrace = receiver.spans.filter((s) => s.traceId === traceId);
        return inTrace.some(isJobSpan) && inTrace.some(isPgSpan) ? inTrace : undefined;
      },
      20_000,
      "gateway, services, pg and job spans in the trace",
    );

    const gatewayServer = spans.find((s) => s.kind === SERVER && s.scope.includes("instrumentation-http"));
    expect(gatewayServer, "the gateway's HTTP server span").to.not.equal(undefined);
    expect(gatewayServer!.parentSpanId, "the incoming traceparent is honoured").to.equal(callerSpanId);
    expect(
      spans.some((s) => s.scope.includes("instrumentation-koa")),
      "koa spans",
    ).to.equal(true);
    const rpcClient = spans.find((s) => s.kind === CLIENT && s.attributes["rpc.service"] === "billing.wallet.v1.WalletService");
    const rpcServer = spans.find((s) => s.kind === SERVER && s.attributes["rpc.service"] === "billing.wallet.v1.WalletService");
    expect(rpcClient, "the gateway's Connect client span").to.not.equal(undefined);
    expect(rpcServer, "the services' Connect server span").to.not.equal(undefined);
    expect(rpcServer!.parentSpanId, "traceparent crossed HTTP/2").to.equal(rpcClient!.spanId);
    expect(
      spans.filter(isPgSpan).some((s) => hasAncestor(spans, s, rpcServer!)),
      "pg spans under the service call",
    ).to.equal(true);
    const job = spans.find(isJobSpan)!;
    expect(job.name).to.contain("renewals");
    expect(hasAncestor(spans, job, rpcServer!), "the job continues the trace that enqueued it").to.equal(true);
    expect(spans.every((s) => s.serviceName === "billing-trace-test")).to.equal(true);
    expect(
      [...receiver.contentTypes].every((t) => t.startsWith("application/json")),
      "OTLP over http/json",
    ).to.equal(true);

    // pino lines written inside the spans carry their ids.
    const access = logLines.find((l) => l.trace_id === traceId && l.msg === "request");
    expect(access, "a log line of the request with its trace_id").to.not.equal(undefined);
    expect(access.span_id).to.match(/^[0-9a-f]{16}$/);
  });
});

const isPgSpan = (s: ReceivedSpan) =>
  (s.scope.includes("instrumentation-pg") && s.attributes["db.system"] !== undefined) || s.attributes["db.system.name"] === "postgresql";
const isJobSpan = (s: ReceivedSpan) => s.scope === "billing" && /^process /.test(s.name);

function hasAncestor(spans: ReceivedSpan[], span: ReceivedSpan, ancestor: ReceivedSpan): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (let p = byId.get(span.parentSpanId); p; p = byId.get(p.parentSpanId)) if (p.spanId === ancestor.spanId) return true;
  return false;
}

async function freePorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < n; i++) {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    ports.push((server.address() as { port: number }).port);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return ports;
}

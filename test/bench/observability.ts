/**
 * Observability overhead benchmark (not a test): GET /api/v1/subscriptions/{id}
 * against `billing start all` run as its own process three ways — metrics off
 * (METRICS_PORT=0), metrics on, metrics + tracing (every request sampled,
 * OTLP/HTTP JSON to a receiver in this process) — and prints req/s,
 * latencies and the overhead against the first. Goal: ≤ 10 % req/s.
 * Run with DATABASE_URL/REDIS_URL set: `node test/bench/observability.ts`
 * (BENCH_REQUESTS, BENCH_CONCURRENCY, BENCH_ROUNDS).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createTestDatabase, dropTemplate } from "../support/database.ts";
import { infrastructure } from "../support/infrastructure.ts";
import { apiClient } from "../support/http.ts";
import { freePort } from "../support/redis-process.ts";
import { eventually } from "../support/eventually.ts";
import { startOtlpReceiver } from "../support/otlp-receiver.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 4000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ADMIN_KEY = "bench-admin-key-0123456789";

interface Variant {
  name: string;
  env: (otlp: string) => Record<string, string>;
}
const VARIANTS: Variant[] = [
  { name: "metrics off, tracing off", env: () => ({ METRICS_PORT: "0" }) },
  { name: "metrics on", env: () => ({ BENCH_METRICS: "on" }) },
  {
    name: "metrics on + tracing (10 % sampled)",
    env: (otlp) => ({
      BENCH_METRICS: "on",
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.1",
      OTEL_SERVICE_NAME: "billing-bench",
      OTEL_METRICS_EXPORTER: "none",
      OTEL_LOGS_EXPORTER: "none",
    }),
  },
  {
    name: "metrics on + tracing (all sampled)",
    env: (otlp) => ({
      BENCH_METRICS: "on",
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "billing-bench",
      OTEL_METRICS_EXPORTER: "none",
      OTEL_LOGS_EXPORTER: "none",
    }),
  },
];

/**
 * CPU seconds the billing process has used (utime + stime from /proc, 100 ticks/s): on a shared
 * machine, CPU per request is a steadier measure of overhead than req/s.
 */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function startBilling(variant: Variant, otlp: string): Promise<{ base: string; pid: number; stop(): Promise<void> }> {
  const database = await createTestDatabase();
  const { redisUrl } = await infrastructure();
  const port = await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: `bench${randomBytes(4).toString("hex")}`,
    ADMIN_API_KEY: ADMIN_KEY,
    SANDBOX: "true",
    PORT: String(port),
    SERVICES_PORT: "0",
    LOG_LEVEL: "warn",
    DB_POOL_MAX: "20",
    // One merchant sends every request: measure the read path, not the per-merchant limiter's 429s.
    RATE_LIMIT_BURST: "100000",
    RATE_LIMIT_PER_SECOND: "100000",
    ...variant.env(otlp),
  };
  // Metrics on: a free operations port (0 would switch metrics off).
  if (env.BENCH_METRICS === "on") env.METRICS_PORT = String(await freePort());
  const child: ChildProcess = spawn(process.execPath, ["--import", "./services/platform/observability/register.ts", "cli/billing.ts", "start", "all"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${port}`;
  await eventually(
    async () =>
      (await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      )) || undefined,
    60_000,
    "billing to listen",
  );
  return {
    base,
    pid: child.pid!,
    async stop() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
      await database.drop();
    },
  };
}

async function measure(count: number, fn: () => Promise<boolean>): Promise<{ rps: number; p50: number; p99: number; failures: number }> {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < count) {
        const t = performance.now();
        if (!(await fn())) failures++;
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  return { rps: latencies.length / seconds, p50: pct(50), p99: pct(99), failures };
}

const receiver = await startOtlpReceiver();
const results = new Map<string, number[]>();
const cpuPerRequest = new Map<string, number[]>();
try {
  console.log(`GET /api/v1/subscriptions/{id}: ${REQUESTS} requests × ${ROUNDS} rounds, concurrency ${CONCURRENCY}, node ${process.version}`);
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of VARIANTS) {
      const billing = await startBilling(variant, receiver.endpoint);
      try {
        const admin = apiClient(billing.base, { "x-admin-key": ADMIN_KEY });
        const merchant = await admin.post("/admin/v1/merchants", { name: "Bench" });
        const api = apiClient(billing.base, { "x-api-key": merchant.body.apiKey });
        const plan = await api.post("/api/v1/subscription-plans", { name: "Bench", amount: "1", currency: "USD", interval: "MONTH" });
        const user = await admin.post("/admin/v1/wallet-users", {
          email: `b-${randomBytes(4).toString("hex")}@example.com`,
          password: "correct horse battery",
          pin: "246810",
        });
        const sub = await api.post("/api/v1/subscriptions", {
          externalReference: "bench",
          planId: plan.body.id,
          walletUserId: user.body.id,
          successUrl: "https://merchant.example/ok",
          cancelUrl: "https://merchant.example/cancel",
        });
        const path = `/api/v1/subscriptions/${sub.body.subscriptionId}`;
        await measure(Math.min(500, REQUESTS), async () => (await api.get(path)).status === 200); // warm-up
        const cpuBefore = cpuSeconds(billing.pid);
        const r = await measure(REQUESTS, async () => (await api.get(path)).status === 200);
        const cpuMs = ((cpuSeconds(billing.pid) - cpuBefore) / REQUESTS) * 1000;
        results.set(variant.name, [...(results.get(variant.name) ?? []), r.rps]);
        cpuPerRequest.set(variant.name, [...(cpuPerRequest.get(variant.name) ?? []), cpuMs]);
        console.log(
          `round ${round + 1}  ${variant.name.padEnd(36)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  ${cpuMs.toFixed(2)} CPU ms/req  failures ${r.failures}`,
        );
      } finally {
        await billing.stop();
      }
    }
  }
  const best = (name: string) => Math.max(...(results.get(name) ?? [0]));
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const baseline = best(VARIANTS[0]!.name);
  const baseCpu = median(cpuPerRequest.get(VARIANTS[0]!.name)!);
  console.log("\nbest req/s of the rounds and median CPU per request of the billing process, against metrics off + tracing off:");
  for (const v of VARIANTS) {
    const rps = best(v.name);
    const cpu = median(cpuPerRequest.get(v.name)!);
    console.log(
      `  ${v.name.padEnd(36)} ${rps.toFixed(0).padStart(6)} req/s ${(((baseline - rps) / baseline) * 100).toFixed(1).padStart(6)} %   ${cpu.toFixed(2)} CPU ms/req ${(((cpu - baseCpu) / baseCpu) * 100).toFixed(1).padStart(6)} %`,
    );
  }
  console.log(`spans received by the OTLP receiver: ${receiver.spans.length}`);
} finally {
  await receiver.close();
  await dropTemplate();
}

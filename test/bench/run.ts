/**
 * Benchmarks (not tests): prints figures for the REST → Connect → Postgres path.
 * Run with DATABASE_URL/REDIS_URL set: `npm run bench` (optionally BENCH_REQUESTS, BENCH_CONCURRENCY).
 */
import { startTestSystem } from "../support/system.ts";
import { dropTemplate } from "../support/database.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);

async function measure(name: string, fn: () => Promise<number>) {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < REQUESTS) {
        const t = performance.now();
        const status = await fn();
        latencies.push(performance.now() - t);
        if (status >= 400) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1);
  console.log(
    `${name.padEnd(28)} ${(latencies.length / seconds).toFixed(0).padStart(6)} req/s  p50 ${pct(50)} ms  p99 ${pct(99)} ms  failures ${failures}  rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
  );
}

const sys = await startTestSystem({ workerGroups: [], env: { DB_POOL_MAX: "20" } });
try {
  const { api } = await sys.createMerchant("Bench");
  const created = await api.post("/api/v1/subscription-plans", { name: "Bench", amount: "9.99", currency: "USD", interval: "MONTH" });
  console.log(`requests ${REQUESTS}, concurrency ${CONCURRENCY}, node ${process.version}`);
  await measure("POST subscription-plans", async () =>
    (await api.post("/api/v1/subscription-plans", { name: "Bench", amount: "9.99", currency: "USD", interval: "MONTH", metadata: { k: "v" } })).status,
  );
  await measure("GET subscription-plans/{id}", async () => (await api.get(`/api/v1/subscription-plans/${created.body.id}`)).status);
  await measure("GET subscription-plans", async () => (await api.get("/api/v1/subscription-plans?limit=20")).status);
} finally {
  await sys.close();
  await dropTemplate();
}

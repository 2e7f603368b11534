/**
 * Benchmark (not a test): payment-order creates per second over the whole
 * path (REST → API-key check → orders RPC → wallet quote → derivation index
 * → address derivation → Postgres insert + event). Run with DATABASE_URL and
 * REDIS_URL set: `node test/bench/payment-orders.ts` (BENCH_REQUESTS, BENCH_CONCURRENCY).
 */
import { startTestSystem } from "../support/system.ts";
import { dropTemplate } from "../support/database.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);

async function measure(name: string, fn: (i: number) => Promise<number>) {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < REQUESTS; i = next++) {
        const t = performance.now();
        const status = await fn(i);
        latencies.push(performance.now() - t);
        if (status >= 400) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1);
  console.log(
    `${name.padEnd(40)} ${(latencies.length / seconds).toFixed(0).padStart(6)} creates/s  p50 ${pct(50)} ms  p99 ${pct(99)} ms  failures ${failures}`,
  );
}

const sys = await startTestSystem({ workerGroups: [], env: { DB_POOL_MAX: "20" } });
try {
  const { api } = await sys.createMerchant("Bench");
  const run = `${Date.now()}`;
  const body = (i: number, extra: Record<string, unknown>) => ({
    externalId: `bench-${run}-${i}-${JSON.stringify(extra)}`,
    externalCustomerId: `c-${i % 50}`,
    ...extra,
  });
  console.log(`requests ${REQUESTS}, concurrency ${CONCURRENCY}, node ${process.version}`);
  // Warm-up: connections, JIT, the cached asset registry.
  for (let i = 0; i < 50; i++) await api.post("/api/v1/payment-orders", body(-i - 1, { asset: "USDT_TRON", amount: "1" }));
  await measure(
    "POST payment-orders (asset amount)",
    async (i) => (await api.post("/api/v1/payment-orders", body(i, { asset: "USDT_TRON", amount: "10" }))).status,
  );
  await measure(
    "POST payment-orders (USD → BTC quote)",
    async (i) => (await api.post("/api/v1/payment-orders", body(i, { asset: "BTC", amount: "100", currency: "USD" }))).status,
  );
  await measure(
    "POST payment-orders (same externalId retry)",
    async () => (await api.post("/api/v1/payment-orders", body(-1, { asset: "USDT_TRON", amount: "1" }))).status,
  );
} finally {
  await sys.close();
  await dropTemplate();
}

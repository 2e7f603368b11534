/**
 * Fairness benchmark (not a test, not in CI): does one merchant bursting at 10×
 * its rate limit slow another merchant down? Prints the quiet merchant's p99
 * alone and during the burst (goal: less than 20 % higher).
 *
 *   DATABASE_URL=… REDIS_URL=… node test/bench/fairness.ts
 *   (BENCH_SECONDS=10, NOISY_LIMIT=50 requests/s, QUIET_RPS=20)
 */
import { setTimeout as sleep } from "node:timers/promises";
import { startTestSystem } from "../support/system.ts";
import { dropTemplate } from "../support/database.ts";
import type { ApiClient } from "../support/http.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const NOISY_LIMIT = Number(process.env.NOISY_LIMIT ?? 50);
const QUIET_RPS = Number(process.env.QUIET_RPS ?? 20);

interface Load {
  latencies: number[];
  statuses: Map<number, number>;
}

/** Open loop: requests start on schedule whether or not earlier ones finished (as real clients do). */
async function paced(rps: number, seconds: number, send: () => Promise<number>): Promise<Load> {
  const load: Load = { latencies: [], statuses: new Map() };
  const inFlight: Promise<void>[] = [];
  const started = performance.now();
  const total = Math.round(rps * seconds);
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rps;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const t = performance.now();
    inFlight.push(
      send().then((status) => {
        load.latencies.push(performance.now() - t);
        load.statuses.set(status, (load.statuses.get(status) ?? 0) + 1);
      }),
    );
  }
  await Promise.all(inFlight);
  return load;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const summary = (load: Load) =>
  `p50 ${percentile(load.latencies, 50).toFixed(1)} ms  p99 ${percentile(load.latencies, 99).toFixed(1)} ms  answers ${JSON.stringify(Object.fromEntries(load.statuses))}`;

const sys = await startTestSystem({ workerGroups: [], env: { DB_POOL_MAX: "20" } });
try {
  const quiet = await sys.createMerchant("Quiet");
  const noisy = await sys.createMerchant("Noisy");
  await sys.admin.request("PATCH", `/admin/v1/merchants/${noisy.id}`, { body: { rateLimitPerSecond: NOISY_LIMIT, rateLimitBurst: NOISY_LIMIT } });
  const plan = (await quiet.api.post("/api/v1/subscription-plans", { name: "Fair", amount: "9.99", currency: "USD", interval: "MONTH" })).body;
  const read = (api: ApiClient, id: string) => async () => (await api.get(`/api/v1/subscription-plans/${id}`)).status;
  const noisyPlan = (await noisy.api.post("/api/v1/subscription-plans", { name: "Noisy", amount: "1", currency: "USD", interval: "MONTH" })).body;

  console.log(`node ${process.version}; quiet merchant ${QUIET_RPS} req/s; noisy merchant limited to ${NOISY_LIMIT}/s, sending ${NOISY_LIMIT * 10}/s; ${SECONDS} s each`);
  await paced(QUIET_RPS, 2, read(quiet.api, plan.id)); // warm-up
  const alone = await paced(QUIET_RPS, SECONDS, read(quiet.api, plan.id));
  console.log(`quiet alone:          ${summary(alone)}`);
  await sleep(1000); // let the noisy bucket start full
  const [during, burst] = await Promise.all([
    paced(QUIET_RPS, SECONDS, read(quiet.api, plan.id)),
    paced(NOISY_LIMIT * 10, SECONDS, read(noisy.api, noisyPlan.id)),
  ]);
  console.log(`quiet during burst:   ${summary(during)}`);
  console.log(`noisy (10× its limit): ${summary(burst)}`);
  const increase = (percentile(during.latencies, 99) / percentile(alone.latencies, 99) - 1) * 100;
  console.log(`quiet p99 change with the burst: ${increase >= 0 ? "+" : ""}${increase.toFixed(1)} % (goal < 20 %)`);
} finally {
  await sys.close();
  await dropTemplate();
}

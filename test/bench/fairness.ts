/**
 * Fairness benchmark (not a test, not in CI): does one merchant bursting at 10×
 * its rate limit slow another merchant down? Prints the quiet merchant's p99
 * alone and during the burst (goal: less than 20 % higher).
 *
 *   DATABASE_URL=… REDIS_URL=… node test/bench/fairness.ts
 *   (BENCH_SECONDS=10, NOISY_LIMIT=50 requests/s, QUIET_RPS=20)
 * The system runs on the main thread, both clients on a worker thread, so the
 * load generator does not share the server's event loop (it still shares the CPUs).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { startTestSystem } from "../support/system.ts";
import { dropTemplate } from "../support/database.ts";
import { apiClient, type ApiClient } from "../support/http.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const NOISY_LIMIT = Number(process.env.NOISY_LIMIT ?? 50);
const QUIET_RPS = Number(process.env.QUIET_RPS ?? 20);

interface Load {
  latencies: number[];
  statuses: Map<number, number>;
}

/**
 * Open loop: requests start on schedule whether or not earlier ones finished
 * (as real clients do), with at most `maxInFlight` open (a send due while
 * that many are open is skipped and counted as "skipped").
 */
async function paced(rps: number, seconds: number, send: () => Promise<number>, maxInFlight = 64): Promise<Load> {
  const load: Load = { latencies: [], statuses: new Map() };
  const inFlight = new Set<Promise<void>>();
  const count = (key: number) => load.statuses.set(key, (load.statuses.get(key) ?? 0) + 1);
  const started = performance.now();
  const total = Math.round(rps * seconds);
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rps;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    if (inFlight.size >= maxInFlight) {
      count(0);
      continue;
    }
    const t = performance.now();
    const p: Promise<void> = send().then(
      (status) => {
        load.latencies.push(performance.now() - t);
        count(status);
      },
      () => {
        count(-1);
      },
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }
  await Promise.all(inFlight);
  return load;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const summary = (load: Load) =>
  `p50 ${percentile(load.latencies, 50).toFixed(1)} ms  p99 ${percentile(load.latencies, 99).toFixed(1)} ms  answers ${JSON.stringify(Object.fromEntries(load.statuses))} (0 = skipped, -1 = network error)`;

interface Setup {
  baseUrl: string;
  quietKey: string;
  noisyKey: string;
  quietPlan: string;
  noisyPlan: string;
}

async function runClients(setup: Setup): Promise<string[]> {
  const quiet = apiClient(setup.baseUrl, { "x-api-key": setup.quietKey });
  const noisy = apiClient(setup.baseUrl, { "x-api-key": setup.noisyKey });
  const read = (api: ApiClient, id: string) => async () => (await api.get(`/api/v1/subscription-plans/${id}`)).status;
  const lines = [
    `node ${process.version}; quiet merchant ${QUIET_RPS} req/s; noisy merchant limited to ${NOISY_LIMIT}/s, sending ${NOISY_LIMIT * 10}/s; ${SECONDS} s each`,
  ];
  await paced(QUIET_RPS, 2, read(quiet, setup.quietPlan)); // warm-up
  const alone = await paced(QUIET_RPS, SECONDS, read(quiet, setup.quietPlan));
  lines.push(`quiet alone:           ${summary(alone)}`);
  await sleep(1000); // let the noisy bucket start full
  const [during, burst] = await Promise.all([
    paced(QUIET_RPS, SECONDS, read(quiet, setup.quietPlan)),
    paced(NOISY_LIMIT * 10, SECONDS, read(noisy, setup.noisyPlan), 32),
  ]);
  lines.push(`quiet during burst:    ${summary(during)}`);
  lines.push(`noisy (10× its limit): ${summary(burst)}`);
  const increase = (percentile(during.latencies, 99) / percentile(alone.latencies, 99) - 1) * 100;
  lines.push(`quiet p99 change with the burst: ${increase >= 0 ? "+" : ""}${increase.toFixed(1)} % (goal < 20 %)`);
  return lines;
}

if (!isMainThread) {
  parentPort!.postMessage(await runClients(workerData as Setup));
} else {
  const sys = await startTestSystem({ workerGroups: [], env: { DB_POOL_MAX: "20" } });
  try {
    const quiet = await sys.createMerchant("Quiet");
    const noisy = await sys.createMerchant("Noisy");
    await sys.admin.request("PATCH", `/admin/v1/merchants/${noisy.id}`, { body: { rateLimitPerSecond: NOISY_LIMIT, rateLimitBurst: NOISY_LIMIT } });
    const plan = { amount: "9.99", currency: "USD", interval: "MONTH" };
    const setup: Setup = {
      baseUrl: sys.baseUrl,
      quietKey: quiet.apiKey,
      noisyKey: noisy.apiKey,
      quietPlan: (await quiet.api.post("/api/v1/subscription-plans", { name: "Quiet", ...plan })).body.id,
      noisyPlan: (await noisy.api.post("/api/v1/subscription-plans", { name: "Noisy", ...plan })).body.id,
    };
    const worker = new Worker(new URL(import.meta.url), { workerData: setup });
    const lines: string[] = await new Promise((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    await worker.terminate();
    for (const line of lines) console.log(line);
  } finally {
    await sys.close();
    await dropTemplate();
  }
}

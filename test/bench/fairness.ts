/**
 * Fairness benchmark (not a test, not in CI): does one merchant bursting at 10×
 * its rate limit slow another merchant down? Prints the quiet merchant's p99
 * alone and during the burst (goal: less than 20 % higher).
 *
 *   npm run bench:fairness   (DATABASE_URL, REDIS_URL; BENCH_SECONDS=30, NOISY_LIMIT=50 requests/s, QUIET_RPS=20)
 *
 * The two conditions alternate in rounds of 5 s (alone, during the burst, alone, …) and each p99 is taken over all
 * its rounds: a drift of the machine's own load then weighs on both alike, and at 20 req/s the p99 is not the
 * 2nd-worst request of one 10 s window.
 *
 * The service runs as `npm start` runs it (one process, every role, the flags of package.json), and each
 * merchant's client is a process of its own: a client that shared a process with the service or with the other
 * client would time its own pauses (a 20 ms scavenge of the burst's generator) as the quiet merchant's latency.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { dropTemplate } from "../support/database.ts";
import { SplitSystem } from "./split-roles.ts";
import type { ClientTask, Load } from "./fairness-client.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const ROUND_SECONDS = 5;
const NOISY_LIMIT = Number(process.env.NOISY_LIMIT ?? 50);
const QUIET_RPS = Number(process.env.QUIET_RPS ?? 20);

/** A client process (fairness-client.ts), started once and kept for every round. */
type Client = { run(task: ClientTask): Promise<Load>; stop(): void };

async function clientProcess(): Promise<Client> {
  const child = fork(fileURLToPath(new URL("./fairness-client.ts", import.meta.url)), { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const exited = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`fairness client exited (${code})`))));
  const next = () => Promise.race([new Promise<unknown>((resolve) => child.once("message", resolve)), exited]);
  await next(); // "ready"
  return {
    async run(task) {
      child.send(task);
      return (await next()) as Load;
    },
    stop: () => child.disconnect(),
  };
}

function add(into: Load, load: Load): void {
  into.latencies.push(...load.latencies);
  for (const [status, n] of Object.entries(load.statuses)) into.statuses[Number(status)] = (into.statuses[Number(status)] ?? 0) + n;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const summary = (load: Load) =>
  `p50 ${percentile(load.latencies, 50).toFixed(1)} ms  p99 ${percentile(load.latencies, 99).toFixed(1)} ms  answers ${JSON.stringify(load.statuses)} (0 = skipped, -1 = network error)`;

async function measure(sys: SplitSystem, quietClient: Client, noisyClient: Client): Promise<string[]> {
  const quiet = await sys.createMerchant("Quiet");
  const noisy = await sys.createMerchant("Noisy");
  const limit = await sys.admin.request("PATCH", `/admin/v1/merchants/${noisy.id}`, {
    body: { rateLimitPerSecond: NOISY_LIMIT, rateLimitBurst: NOISY_LIMIT },
  });
  if (limit.status !== 200) throw new Error(`rate limit not set: ${limit.status} ${limit.text}`);
  const plan = { amount: "9.99", currency: "USD", interval: "MONTH" };
  const planUrl = async (m: typeof quiet, name: string) =>
    `${sys.baseUrl}/api/v1/subscription-plans/${(await m.api.post("/api/v1/subscription-plans", { name, ...plan })).body.id}`;
  const quietTask = { url: await planUrl(quiet, "Quiet"), apiKey: quiet.apiKey, rps: QUIET_RPS, seconds: ROUND_SECONDS, maxInFlight: 64 };
  const noisyTask = { url: await planUrl(noisy, "Noisy"), apiKey: noisy.apiKey, rps: NOISY_LIMIT * 10, seconds: ROUND_SECONDS, maxInFlight: 32 };

  const lines = [
    `node ${process.version}; the service as \`npm start\` runs it; quiet merchant ${QUIET_RPS} req/s; noisy merchant limited to ${NOISY_LIMIT}/s, sending ${NOISY_LIMIT * 10}/s; ${SECONDS} s each in rounds of ${ROUND_SECONDS} s; each client its own process`,
  ];
  await Promise.all([quietClient.run({ ...quietTask, seconds: 2 }), noisyClient.run({ ...noisyTask, rps: 20, seconds: 2 })]); // warm-up
  const alone: Load = { latencies: [], statuses: {} };
  const during: Load = { latencies: [], statuses: {} };
  const burst: Load = { latencies: [], statuses: {} };
  for (let round = 0; round < Math.ceil(SECONDS / ROUND_SECONDS); round++) {
    add(alone, await quietClient.run(quietTask));
    await sleep(1000); // let the noisy bucket start full
    const [quietLoad, noisyLoad] = await Promise.all([quietClient.run(quietTask), noisyClient.run(noisyTask)]);
    add(during, quietLoad);
    add(burst, noisyLoad);
  }
  lines.push(`quiet alone:           ${summary(alone)}`);
  lines.push(`quiet during burst:    ${summary(during)}`);
  lines.push(`noisy (10× its limit): ${summary(burst)}`);
  const increase = (percentile(during.latencies, 99) / percentile(alone.latencies, 99) - 1) * 100;
  lines.push(`quiet p99 change with the burst: ${increase >= 0 ? "+" : ""}${increase.toFixed(1)} % (goal < 20 %)`);
  return lines;
}

const sys = new SplitSystem();
const clients: Client[] = [];
try {
  await sys.start();
  await sys.spawnRole("all", "all");
  clients.push(await clientProcess(), await clientProcess());
  for (const line of await measure(sys, clients[0]!, clients[1]!)) console.log(line);
} finally {
  for (const c of clients) c.stop();
  await sys.close();
  await dropTemplate();
}

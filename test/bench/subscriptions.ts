/**
 * Subscriptions benchmark (not a test): prints figures for subscription create
 * (REST → API key → subscriptions RPC → catalog + wallet RPCs → insert + event
 * + delayed job), reads, and approvals with the first payment (RPC → wallet
 * quote + charge + activation). Run with DATABASE_URL/REDIS_URL set:
 * `node test/bench/subscriptions.ts` (BENCH_REQUESTS, BENCH_CONCURRENCY).
 */
import { startTestSystem } from "../support/system.ts";
import { dropTemplate } from "../support/database.ts";
import { createPlan, createSubscription, createWalletUser, subscriptionBody, subscriptionsRpc, tokenOf } from "../support/subscriptions.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);

async function measure(name: string, count: number, fn: (i: number) => Promise<boolean>) {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        const t = performance.now();
        if (!(await fn(i))) failures++;
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1);
  console.log(`${name.padEnd(34)} ${(latencies.length / seconds).toFixed(0).padStart(6)} /s  p50 ${pct(50)} ms  p99 ${pct(99)} ms  failures ${failures}`);
}

const sys = await startTestSystem({ workerGroups: [], env: { DB_POOL_MAX: "20" } });
const rpc = subscriptionsRpc(sys);
try {
  const { api } = await sys.createMerchant("Bench");
  const plan = await createPlan(api, { amount: "1" });
  const user = await createWalletUser(sys, { USDT_TRON: String(REQUESTS * 2) });
  console.log(`requests ${REQUESTS}, concurrency ${CONCURRENCY}, node ${process.version}`);
  const urls: string[] = [];
  await measure("POST subscriptions", REQUESTS, async () => {
    const res = await api.post("/api/v1/subscriptions", subscriptionBody(plan.id, user.id));
    if (res.status === 201) urls.push(res.body.authorizationUrl);
    return res.status === 201;
  });
  const one = await createSubscription(api, plan.id, user.id);
  await measure("GET subscriptions/{id}", REQUESTS, async () => (await api.get(`/api/v1/subscriptions/${one.subscriptionId}`)).status === 200);
  await measure("GET subscriptions?limit=20", REQUESTS, async () => (await api.get("/api/v1/subscriptions?limit=20")).status === 200);
  const approvals = Math.min(urls.length, Math.max(200, Math.floor(REQUESTS / 4)));
  await measure("ApproveAuthorization + 1st payment", approvals, async (i) => {
    const res = await rpc.client.approveAuthorization({ token: tokenOf(urls[i]!), walletUserId: user.id, fundingAsset: "USDT_TRON" });
    return res.subscription?.status === "ACTIVE";
  });
  const ledger = await sys.admin.get("/admin/v1/ledger/check");
  console.log(`ledger check after the run: ok=${ledger.body.ok}`);
} finally {
  rpc.close();
  await sys.close();
  await dropTemplate();
}

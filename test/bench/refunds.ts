/**
 * Refunds benchmark (not a test): refunds per second on ONE merchant, where
 * every refund locks the merchant's ledger account in that asset (and the
 * charge's row, and the customer's account). Run with DATABASE_URL/REDIS_URL
 * set: `node test/bench/refunds.ts` (BENCH_CHARGES, BENCH_REFUNDS_PER_CHARGE,
 * BENCH_CONCURRENCY). Prints two figures: partial refunds spread over many
 * charges (only the merchant account is shared), and all of them on one
 * charge (its row lock serializes them too); then the same number spread
 * over 10 merchants, for what the one merchant account lock costs; and the
 * wallet's ledger step alone on one merchant account (the lock's ceiling).
 */
import { randomUUID } from "node:crypto";
import { RefundOutcome, WalletService } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";
import { startTestSystem } from "../support/system.ts";
import { dropTemplate } from "../support/database.ts";
import { createPlan, createSubscription, createWalletUser, subscriptionsRpc, tokenOf } from "../support/subscriptions.ts";

const CHARGES = Number(process.env.BENCH_CHARGES ?? 300);
const PER_CHARGE = Number(process.env.BENCH_REFUNDS_PER_CHARGE ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const CUSTOMERS = 30;

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
  console.log(`${name.padEnd(44)} ${(latencies.length / seconds).toFixed(0).padStart(5)} /s  p50 ${pct(50)} ms  p99 ${pct(99)} ms  failures ${failures}`);
}

const sys = await startTestSystem({ workerGroups: [], env: { DB_POOL_MAX: "20" } });
const rpc = subscriptionsRpc(sys);
try {
  const { api, id: merchantId } = await sys.createMerchant("Bench");
  const plan = await createPlan(api, { amount: "10" });
  const big = await createPlan(api, { amount: "100000" });
  const users = await Promise.all(Array.from({ length: CUSTOMERS }, () => createWalletUser(sys, { USDT_TRON: String(CHARGES * 10 + 200000) })));
  console.log(`charges ${CHARGES} × ${PER_CHARGE} refunds, concurrency ${CONCURRENCY}, ${CUSTOMERS} customers, node ${process.version}`);
  const chargeIds: string[] = [];
  for (let i = 0; i < CHARGES; i++) {
    const user = users[i % CUSTOMERS]!;
    const s = await createSubscription(api, plan.id, user.id);
    const res = await rpc.client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" });
    chargeIds.push(res.charge!.id);
  }
  const s = await createSubscription(api, big.id, users[0]!.id);
  const oneCharge = (await rpc.client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: users[0]!.id, fundingAsset: "USDT_TRON" }))
    .charge!.id;

  const total = CHARGES * PER_CHARGE;
  await measure("POST refunds, one merchant, many charges", total, async (i) => {
    const res = await api.post("/api/v1/refunds", { chargeId: chargeIds[i % CHARGES], amount: "1.25" });
    return res.status === 201;
  });
  await measure("POST refunds, one merchant, one charge", Math.min(total, 1000), async () => {
    const res = await api.post("/api/v1/refunds", { chargeId: oneCharge, amount: "0.01" });
    return res.status === 201;
  });
  // The same load over 10 merchants (same charge count): no ledger account is shared by all refunds.
  const spread: { api: typeof api; chargeId: string }[] = [];
  for (let m = 0; m < 10; m++) {
    const other = await sys.createMerchant(`Bench ${m}`);
    const otherPlan = await createPlan(other.api, { amount: "10" });
    for (let i = 0; i < CHARGES / 10; i++) {
      const user = users[(m * 3 + i) % CUSTOMERS]!;
      const sub = await createSubscription(other.api, otherPlan.id, user.id);
      const res = await rpc.client.approveAuthorization({ token: tokenOf(sub.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" });
      spread.push({ api: other.api, chargeId: res.charge!.id });
    }
  }
  await measure("POST refunds, 10 merchants, many charges", total, async (i) => {
    const target = spread[i % spread.length]!;
    const res = await target.api.post("/api/v1/refunds", { chargeId: target.chargeId, amount: "1.25" });
    return res.status === 201;
  });
  // The ledger step alone (wallet.Refund RPC straight to the wallet, one merchant account): the ceiling the account lock sets.
  const rpcClients = new RpcClients(sys.config.internalApiToken);
  const wallet = rpcClients.client(WalletService, sys.config.serviceUrls.wallet);
  const run = randomUUID();
  await measure("wallet.Refund RPC, one merchant account", total, async (i) => {
    const res = await wallet.refund({
      idempotencyKey: `bench-${run}-${i}`,
      merchantId,
      walletUserId: users[i % CUSTOMERS]!.id,
      asset: "USDT_TRON",
      amount: "0.000001",
    });
    return res.outcome === RefundOutcome.SUCCEEDED;
  });
  rpcClients.close();
  const ledger = await sys.admin.get("/admin/v1/ledger/check");
  console.log(`ledger check after the run: ok=${ledger.body.ok}`);
} finally {
  rpc.close();
  await sys.close();
  await dropTemplate();
}

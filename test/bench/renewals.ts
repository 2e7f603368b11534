/**
 * Recurring-billing benchmark (not a test): renewals per second through the
 * whole engine (renewals sweep → BullMQ jobs → renew use case → catalog +
 * wallet RPCs → ledger → settle with events) for N subscriptions that fall
 * due at the same moment. Run with DATABASE_URL/REDIS_URL set:
 * `node test/bench/renewals.ts` (BENCH_SUBSCRIPTIONS default 10000,
 * BENCH_USERS default 500 wallet users sharing them, BENCH_WORKER_PROCESSES
 * default 1: `billing start renewals` child processes, as in production; 0 runs
 * the renewals workers inside this process, next to the services;
 * WORKER_CONCURRENCY default 10 per process).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { randomUUID } from "node:crypto";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createLogger } from "../../services/platform/logger.ts";
import { startSystem, type RunningSystem } from "../../cli/system.ts";
import { startTestSystem } from "../support/system.ts";
import { dropTemplate } from "../support/database.ts";
import { credit, subscriptionsRpc } from "../support/subscriptions.ts";
import { approvedSubscription } from "../support/billing.ts";

const N = Number(process.env.BENCH_SUBSCRIPTIONS ?? 10_000);
const USERS = Math.min(N, Number(process.env.BENCH_USERS ?? 500));
const PROCESSES = Number(process.env.BENCH_WORKER_PROCESSES ?? 1);
const CONCURRENCY = process.env.WORKER_CONCURRENCY ?? "10";
const AMOUNT = "1.5";

const sys = await startTestSystem({ workerGroups: [], env: { DB_POOL_MAX: "20" } });
const rpc = subscriptionsRpc(sys);
const workers: RunningSystem[] = [];
const children: ChildProcess[] = [];
try {
  const { api } = await sys.createMerchant("Bench");
  // One subscription approved the normal way is the template for the others (same plan, funding asset and dates).
  const template = await approvedSubscription(sys, api, rpc.client, { plan: { amount: AMOUNT, interval: "MONTH" }, credits: { USDT_TRON: "100" } });

  // Wallet users cloned from the template's user (their hashes are the same), then funded through the wallet.
  const perUser = Math.ceil(N / USERS);
  const users: string[] = [template.user.id];
  await sys.sql(
    `insert into wallet_users (id, email, password_hash, pin_hash, status, pin_failed_attempts, created_at, updated_at)
     select gen_random_uuid(), 'bench-' || i || '-' || ? || '@example.com', password_hash, pin_hash, status, 0, created_at, updated_at
       from wallet_users, generate_series(2, ?) as i where id = ?`,
    [randomUUID().slice(0, 8), USERS, template.user.id],
  );
  users.push(...(await sys.sql<{ id: string }>("select id from wallet_users where id <> ? and email like 'bench-%'", [template.user.id])).map((r) => r.id));
  for (let i = 0; i < users.length; i += 20) await Promise.all(users.slice(i, i + 20).map((u) => credit(sys, u, "USDT_TRON", String(perUser * 2))));

  // N subscriptions due now: copies of the template, spread over the users.
  await sys.sql(
    `insert into subscriptions (id, merchant_id, plan_id, wallet_user_id, customer_email, external_reference, service_reference, success_url, cancel_url,
        metadata, status, funding_asset, billing_anchor, current_period_start, current_period_end, next_billing_at, created_at, updated_at, activated_at, next_period_index)
     select gen_random_uuid(), s.merchant_id, s.plan_id, (?::uuid[])[1 + (i % ?)], null, 'bench-' || i, null, s.success_url, s.cancel_url,
        '{}', 'ACTIVE', s.funding_asset, now() - interval '1 month', now() - interval '1 month', now() - interval '1 second', now() - interval '1 second', now(), now(), now(), 1
       from subscriptions s, generate_series(1, ?) as i where s.id = ?`,
    [`{${users.join(",")}}`, users.length, N, template.subscriptionId],
  );
  await sys.sql("update subscriptions set next_billing_at = now() + interval '1 year' where id = ?", [template.subscriptionId]);
  console.log(
    `${N} due subscriptions, ${users.length} wallet users, ${PROCESSES || "in-process"} renewals worker process(es) × concurrency ${CONCURRENCY}, node ${process.version}`,
  );

  const started = performance.now();
  if (PROCESSES === 0) {
    const config = { ...sys.config, workerConcurrency: Number(CONCURRENCY), dbPoolMax: 20 };
    workers.push(await startSystem(config, createLogger("silent"), { services: [], gateway: false, workerGroups: ["renewals"] }));
  }
  for (let p = 0; p < PROCESSES; p++) {
    const cli = fileURLToPath(new URL("../../cli/billing.ts", import.meta.url));
    const child = spawn(process.execPath, [cli, "start", "renewals"], {
      stdio: ["ignore", "ignore", "inherit"],
      env: {
        ...process.env,
        DATABASE_URL: sys.config.databaseUrl,
        REDIS_URL: sys.config.redisUrl,
        QUEUE_PREFIX: sys.config.queuePrefix,
        INTERNAL_API_TOKEN: sys.config.internalApiToken,
        // The production clock: a sandbox clock re-reads its offset before every job.
        SANDBOX: "false",
        LOG_LEVEL: "warn",
        METRICS_PORT: "0",
        SWEEP_INTERVAL_MS: "500",
        DB_POOL_MAX: "20",
        WORKER_CONCURRENCY: CONCURRENCY,
        ...Object.fromEntries(Object.entries(sys.config.serviceUrls).map(([name, url]) => [`${name.toUpperCase()}_SERVICE_URL`, url])),
      },
    });
    children.push(child);
  }
  let last = 0;
  let lastAt = started;
  for (;;) {
    const [row] = await sys.sql<{ done: number }>(
      "select count(*)::int as done from subscriptions where next_period_index = 2 and external_reference like 'bench-%'",
    );
    const done = row!.done;
    const t = performance.now();
    if (t - lastAt >= 5000 || done === N) {
      console.log(
        `  ${String(done).padStart(6)} renewed after ${((t - started) / 1000).toFixed(1)} s (${((done - last) / ((t - lastAt) / 1000)).toFixed(0)}/s lately)`,
      );
      last = done;
      lastAt = t;
    }
    if (done === N) break;
    if (t - started > 600_000) throw new Error("gave up after 10 minutes");
    await sleep(250);
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`renewals: ${N} in ${seconds.toFixed(1)} s = ${(N / seconds).toFixed(0)} renewals/s (end to end: sweep claim → job → charge → settle)`);
  const [charges] = await sys.sql<{ ok: number; other: number }>(
    "select count(*) filter (where status = 'SUCCEEDED' and period_index = 1)::int as ok, count(*) filter (where status <> 'SUCCEEDED')::int as other from subscription_charges",
  );
  console.log(`charges: ${charges!.ok} succeeded for period 1, ${charges!.other} not succeeded`);
  const ledger = await sys.admin.get("/admin/v1/ledger/check");
  console.log(`ledger check after the run: ok=${ledger.body.ok} (${ledger.body.transactionsChecked} transactions)`);
} finally {
  for (const c of children) c.kill("SIGTERM");
  await Promise.all(children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(null) : c.once("exit", resolve)))));
  for (const w of workers) await w.close();
  rpc.close();
  await sys.close();
  await dropTemplate();
}

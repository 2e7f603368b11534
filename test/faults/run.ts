/**
 * The fault suite (`npm run test:faults`): its own PostgreSQL cluster and
 * redis-server, the gateway, services and two workers processes started as
 * separate processes with SANDBOX=true (the shipped build: `npm start`'s command on `dist/`), and the faults production sees:
 * workers killed mid-renewal and mid-payout, Redis flushed and restarted empty, PostgreSQL
 * stopped with `-m immediate` under load, a webhook receiver failing, and
 * SIGTERM of every role. It never touches the shared servers and ends only
 * the processes it started. Prints a table; exits 1 when an invariant fails.
 *
 * Sizes: FAULT_SUBSCRIPTIONS (default 100), FAULT_SWEEP_MS (default 2000).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdtempSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { SubscriptionsService, ApprovalOutcome } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";
import { serviceCheck } from "../../services/platform/health/readiness.ts";
import { apiClient } from "../support/http.ts";
import { eventually } from "../support/eventually.ts";
import { freePort, startRedisProcess, type RedisProcess } from "../support/redis-process.ts";
import { startPostgresProcess, type PostgresProcess } from "../support/postgres-process.ts";
import { NODE_ARGS, repoPath } from "../bench/split-roles.ts";

const N = Number(process.env.FAULT_SUBSCRIPTIONS ?? 100);
const SWEEP_MS = Number(process.env.FAULT_SWEEP_MS ?? 2000);
const OUTAGE_S = 10;
const RESPONSE_BOUND_MS = 5_000; // RPC_TIMEOUT_MS below plus slack
/** The shipped build, as `npm start` runs it (its node flags and `dist/cli/billing.js`), without its `start` argument. */
const ROLE_COMMAND = NODE_ARGS.slice(0, -1);
const ADMIN_KEY = "fault-suite-admin-key";
const DAY = 86_400;

interface Row {
  fault: string;
  invariant: string;
  measured: string;
  ok: boolean;
}
const table: Row[] = [];
function record(fault: string, invariant: string, measured: string, ok: boolean) {
  table.push({ fault, invariant, measured, ok });
  console.log(`${ok ? "PASS" : "FAIL"}  ${fault}: ${invariant} — ${measured}`);
}

const logDir = mkdtempSync(join(tmpdir(), "billing-faults-"));
let pgServer: PostgresProcess;
let redis: RedisProcess;
let db: pg.Pool;
let env: NodeJS.ProcessEnv;
const roles = new Map<string, { child: ChildProcess; args: string[]; extra: NodeJS.ProcessEnv }>();

function startRole(name: string, args: string[], extra: NodeJS.ProcessEnv = {}): ChildProcess {
  const out = createWriteStream(join(logDir, `${name}.log`), { flags: "a" });
  const child = spawn(process.execPath, [...ROLE_COMMAND, ...args], { cwd: repoPath("."), env: { ...env, ...extra }, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  roles.set(name, { child, args, extra });
  return child;
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** `eventually`, where a check that throws (a read during a fault) counts as "not yet". */
const until = <T>(what: string, timeoutMs: number, check: () => Promise<T | undefined | false>, everyMs = 100): Promise<T> =>
  eventually(() => check().catch(() => undefined), timeoutMs, what, everyMs);

const q = async <T = any>(sql: string, params: unknown[] = []): Promise<T[]> => (await db.query(sql, params)).rows as T[];

async function main() {
  const started = Date.now();
  pgServer = await startPostgresProcess({ maxConnections: 200 });
  redis = await startRedisProcess();
  const gatewayPort = await freePort();
  const servicesPort = await freePort();
  const databaseUrl = pgServer.url.replace(/\/postgres$/, "/billing");
  env = {
    ...process.env,
    NODE_ENV: "development",
    // Only the workers serve an operations port here (set per role); the others need none.
    METRICS_PORT: "0",
    SANDBOX: "true",
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    ADMIN_API_KEY: ADMIN_KEY,
    PORT: String(gatewayPort),
    SERVICES_PORT: String(servicesPort),
    PUBLIC_BASE_URL: `http://127.0.0.1:${gatewayPort}`,
    QUEUE_PREFIX: "faults",
    LOG_LEVEL: "warn",
    DB_POOL_MAX: "5",
    DB_STATEMENT_TIMEOUT_MS: "3000",
    DB_CONNECT_TIMEOUT_MS: "3000",
    RPC_TIMEOUT_MS: "4000",
    SWEEP_INTERVAL_MS: String(SWEEP_MS),
    RECONCILE_INTERVAL_MS: "60000",
    WEBHOOK_ALLOW_PRIVATE: "true",
    WEBHOOK_RETRY_SCHEDULE: "1,1,1,2,2,2,3,3,3,3,3,3",
    WEBHOOK_TIMEOUT_MS: "2000",
    CHARGE_NOTICE_DAYS: "0",
    PAYOUT_DESTINATION_COOLDOWN_MINUTES: "0",
  };
  for (const key of ["TEST_DATABASE_URL", "TEST_REDIS_URL"]) delete env[key];
  const migrate = spawn(process.execPath, [...ROLE_COMMAND, "migrate"], { cwd: repoPath("."), env, stdio: "ignore" });
  if ((await exited(migrate)) !== 0) throw new Error("migrate failed");
  db = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  db.on("error", () => {});

  const workerHealth = [await freePort(), await freePort()];
  startRole("services", ["start", "services"]);
  startRole("gateway", ["start", "gateway"]);
  startRole("workers-a", ["start", "workers"], { METRICS_PORT: String(workerHealth[0]) });
  startRole("workers-b", ["start", "workers"], { METRICS_PORT: String(workerHealth[1]) });
  const base = `http://127.0.0.1:${gatewayPort}`;
  const admin = apiClient(base, { "x-admin-key": ADMIN_KEY });
  await until("gateway ready", 60_000, async () => (await admin.get("/readyz")).status === 200);
  for (const port of workerHealth) await until("workers ready", 60_000, async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200);

  // ---- arrangement: N approved daily subscriptions, each customer funded for 100 periods
  const merchant = (await admin.post("/admin/v1/merchants", { name: "Faults" })).body;
  const api = apiClient(base, { "x-api-key": merchant.apiKey });
  const receiver = await startReceiver();
  const endpoint = (await api.post("/api/v1/webhook-endpoints", { url: receiver.url })).body;
  const plan = (await api.post("/api/v1/subscription-plans", { name: "Daily", amount: "1", currency: "USD", interval: "DAY" })).body;
  const rpc = new RpcClients(env.INTERNAL_API_TOKEN ?? "dev-internal-token-change-me");
  const subsClient = rpc.client(SubscriptionsService, `http://127.0.0.1:${servicesPort}`);
  const subs: string[] = [];
  await pool(N, 8, async (i) => {
    const user = (await admin.post("/admin/v1/wallet-users", { email: `c${i}@faults.example`, password: "correct horse battery", pin: "246810" })).body;
    await admin.post(`/admin/v1/wallet-users/${user.id}/credits`, { asset: "USDT_TRON", amount: "100" });
    const s = (
      await api.post("/api/v1/subscriptions", {
        externalReference: `f-${i}`,
        planId: plan.id,
        walletUserId: user.id,
        successUrl: "https://m.example/ok",
        cancelUrl: "https://m.example/no",
      })
    ).body;
    const token = new URL(s.authorizationUrl).pathname.split("/").pop()!;
    const res = await subsClient.approveAuthorization({ token, walletUserId: user.id, fundingAsset: "USDT_TRON" });
    if (res.outcome !== ApprovalOutcome.APPROVED) throw new Error(`approval refused: ${res.message}`);
    subs.push(s.subscriptionId);
  });
  console.log(`arranged ${N} subscriptions in ${((Date.now() - started) / 1000).toFixed(1)} s (logs: ${logDir})`);

  const serviceNow = async () => new Date((await admin.get("/admin/v1/sandbox/clock")).body.now);
  const advanceDay = () => admin.post("/admin/v1/sandbox/clock/advance", { seconds: DAY });
  /** All renewals of the current service day done: nothing due, nothing in flight. */
  const quiet = async () => {
    const now = await serviceNow();
    const [r] = await q(
      `select (select count(*)::int from subscriptions where status in ('ACTIVE','TRIALING') and next_billing_at <= $1) as due,
              (select count(*)::int from subscription_charges where status = 'PENDING') as pending`,
      [now],
    );
    return r.due === 0 && r.pending === 0;
  };
  const duplicates = async () =>
    (
      await q(
        `select count(*)::int as n from (select 1 from subscription_charges where status = 'SUCCEEDED' group by subscription_id, period_index, change_session_id having count(*) > 1) d`,
      )
    )[0].n as number;
  const wrongBalances = async () =>
    (
      await q(
        `select count(*)::int as n from ledger_accounts a
          where a.owner_type = 'WALLET_USER' and a.asset = 'USDT_TRON'
            and a.balance <> 100 - (select coalesce(sum(c.asset_amount), 0) from subscription_charges c where c.wallet_user_id = a.owner_id and c.status = 'SUCCEEDED')`,
      )
    )[0].n as number;
  const books = async () => {
    const ledger = (await admin.get("/admin/v1/ledger/check")).body;
    const rec = (await admin.get("/admin/v1/reconciliation")).body;
    return { ledgerOk: ledger.ok === true, reconciliation: rec.status as string, anomalies: rec.anomalies?.length ?? -1 };
  };
  const periodsPaid = async (period: number) =>
    (
      await q(
        `select count(distinct subscription_id)::int as n from subscription_charges where status = 'SUCCEEDED' and period_index = $1 and change_session_id is null`,
        [period],
      )
    )[0].n as number;

  // ---- 1. kill -9 of a workers process every few seconds during renewals
  {
    const t0 = Date.now();
    await advanceDay();
    let kills = 0;
    let stop = false;
    // Kills for the first 20 s of the renewal burst (or until it is done), then the processes live on.
    const killUntil = Date.now() + 20_000;
    const killer = (async () => {
      // The first kill lands as soon as the burst has begun: its first charges opened (a batch renews 100 in one
      // set, well under a second now, so this polls finely), and always happens; the next every 2.5 s while work remains.
      const begun = async () => (await q("select count(*)::int as n from subscription_charges where period_index = 1 and change_session_id is null"))[0].n > 0;
      await until("the renewal burst to begin", 60_000, begun, 5).catch(() => undefined);
      for (let k = 0; Date.now() < killUntil; k++) {
        if (k > 0) await sleep(2500);
        if (k > 0 && stop) break;
        const name = k % 2 === 0 ? "workers-a" : "workers-b";
        const role = roles.get(name)!;
        role.child.kill("SIGKILL");
        await exited(role.child);
        kills += 1;
        startRole(name, role.args, role.extra);
      }
    })();
    await until("renewals done under kill -9", 180_000, async () => (await periodsPaid(1)) === N && (await quiet()));
    stop = true;
    await killer;
    const dup = await duplicates();
    const wrong = await wrongBalances();
    const b = await books();
    record(
      "1 kill -9 workers (every 2.5 s)",
      "one SUCCEEDED charge per subscription and period",
      `${kills} kills, ${N}/${N} renewed in ${((Date.now() - t0) / 1000).toFixed(1)} s, duplicates = ${dup}`,
      dup === 0 && kills > 0,
    );
    record(
      "1 kill -9 workers",
      "every balance exact; ledger and reconciliation clean",
      `wrong balances = ${wrong}, ledger ${b.ledgerOk ? "ok" : "BAD"}, reconciliation ${b.reconciliation}`,
      wrong === 0 && b.ledgerOk && b.reconciliation === "ok",
    );
  }

  // ---- 1b. kill -9 of a workers process while payouts are being handed to the chain
  {
    const t0 = Date.now();
    // The Faults merchant's balance (the renewals' charges) pays out to one address; its workers hand each payout over.
    const dest = (await api.post("/api/v1/payout-destinations", { asset: "USDT_TRON", address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t" })).body;
    const availableOf = async () => Number((await api.get("/api/v1/balance")).body.available.find((b: any) => b.asset === "USDT_TRON")?.amount ?? 0);
    const before = await availableOf();
    const P = Math.min(30, Math.floor(before / 6)); // 5 + 1 fee each, all covered
    const ids: string[] = [];
    let creating = true;
    let kills = 0;
    const killer = (async () => {
      // First kill as soon as the first payout exists, then every second while payouts are being created or handed over.
      await until("first payout", 60_000, async () => ids.length > 0 || !creating);
      for (let k = 0; creating || k < 2; k++) {
        if (k > 0) await sleep(1000);
        const name = k % 2 === 0 ? "workers-a" : "workers-b";
        const role = roles.get(name)!;
        role.child.kill("SIGKILL");
        await exited(role.child);
        kills += 1;
        startRole(name, role.args, role.extra);
      }
    })();
    const refused: string[] = [];
    await pool(P, 3, async (i) => {
      const res = await api.post("/api/v1/payouts", { destinationId: dest.id, amount: "5" }, { "idempotency-key": `fault-payout-${i}` });
      if (res.status === 201) ids.push(res.body.id);
      else refused.push(`${res.status} ${res.body?.error}`);
    });
    creating = false;
    await killer;
    // The killed workers' leases (30 s) run out and the payouts sweep finishes what they held.
    await until("payouts handed to the chain after kill -9", 180_000, async () => {
      const [r] = await q("select count(*)::int as n from payouts where id = any($1) and status = 'PROCESSING'", [ids]);
      return r.n === ids.length;
    });
    await admin.post("/admin/v1/sandbox/clock/advance", { seconds: 60 });
    await until("payouts PAID", 60_000, async () => {
      const [r] = await q("select count(*)::int as n from payouts where id = any($1) and status = 'PAID'", [ids]);
      return r.n === ids.length;
    });
    const [chain] = await q(
      `select count(*)::int as rows, count(distinct payout_id)::int as payouts, coalesce(sum(submissions - 1), 0)::int as retried
         from payout_sandbox_chain where payout_id = any($1)`,
      [ids],
    );
    const [moves] = await q(
      `select count(*)::int as n, count(distinct idempotency_key)::int as keys from ledger_transactions
        where kind = 'PAYOUT' and idempotency_key = any(select 'payout-debit-' || unnest($1::text[]))`,
      [ids],
    );
    const [paidEvents] = await q("select count(*)::int as n from events where type = 'payout.paid' and data->>'id' = any($1)", [ids]);
    const after = await availableOf();
    const b = await books();
    const onceEach = chain.rows === ids.length && chain.payouts === ids.length && moves.n === ids.length && paidEvents.n === ids.length;
    record(
      "1b kill -9 workers during payouts",
      "each payout once on the chain, one PAYOUT ledger movement, PAID once",
      `${kills} kills, ${ids.length}/${P} created (refused: ${refused.join(", ") || "none"}), chain rows = ${chain.rows} (${chain.retried} retried submissions), PAYOUT transactions = ${moves.n}, payout.paid = ${paidEvents.n} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
      onceEach && kills > 0 && ids.length === P,
    );
    record(
      "1b kill -9 workers during payouts",
      "balance exact (6 per payout); ledger and reconciliation clean",
      `available ${before} → ${after}, ledger ${b.ledgerOk ? "ok" : "BAD"}, reconciliation ${b.reconciliation}`,
      Math.abs(before - 6 * ids.length - after) < 1e-9 && b.ledgerOk && b.reconciliation === "ok",
    );
  }

  // ---- 2 and 3. Redis loses its data (FLUSHALL; restart empty) with renewals, expiries and webhooks pending
  for (const [label, lose] of [
    [
      "2 Redis FLUSHALL",
      async () => {
        const c = new Redis(redis.url);
        await c.flushall();
        c.disconnect();
      },
    ],
    [
      "3 Redis restarted empty",
      async () => {
        await redis.stop();
        await redis.start();
      },
    ],
  ] as const) {
    // Authorizations that expire at the coming due time, and events to deliver.
    const pendingAuth: string[] = [];
    for (let i = 0; i < 5; i++) {
      const u = (await admin.post("/admin/v1/wallet-users", { email: `x${label[0]}${i}@faults.example`, password: "correct horse battery", pin: "246810" }))
        .body;
      pendingAuth.push(
        (
          await api.post("/api/v1/subscriptions", {
            externalReference: `x${label[0]}-${i}`,
            planId: plan.id,
            walletUserId: u.id,
            successUrl: "https://m.example/ok",
            cancelUrl: "https://m.example/no",
            authorizationExpiresInMinutes: 60,
          })
        ).body.subscriptionId,
      );
    }
    // A NEXT_BILLING plan change, approved: it takes effect at the coming billing date.
    const changed = subs[label.startsWith("2") ? 0 : 1]!;
    const newPlan = (await api.post("/api/v1/subscription-plans", { name: `Daily v${label[0]}`, amount: "1.5", currency: "USD", interval: "DAY" })).body;
    const change = (
      await api.post(`/api/v1/subscriptions/${changed}/change-sessions`, {
        requestedPlanId: newPlan.id,
        effectiveMode: "NEXT_BILLING",
        successUrl: "https://m.example/ok",
        cancelUrl: "https://m.example/no",
      })
    ).body;
    const owner = (await api.get(`/api/v1/subscriptions/${changed}`)).body.walletUserId as string;
    const approved = await subsClient.approveChangeSession({ token: new URL(change.approvalUrl).pathname.split("/").pop()!, walletUserId: owner });
    if (!approved.approved) throw new Error("change approval refused");
    const period = (await q("select max(next_period_index)::int as p from subscriptions where status = 'ACTIVE'"))[0].p as number;
    const eventsBefore = (await q("select count(*)::int as n from events"))[0].n as number;
    // The advance runs the due sweeps at once (jobs enqueued), then Redis loses them all.
    await advanceDay();
    const due = Date.now();
    await lose();
    const firstWork = await until(`${label}: work resumes`, 120_000, async () => {
      const [r] = await q("select count(*)::int as n from subscription_charges where period_index = $1 and status = 'SUCCEEDED'", [period]);
      return r.n > 0 ? Date.now() : undefined;
    });
    await until(`${label}: all done`, 240_000, async () => {
      if ((await periodsPaid(period)) !== N || !(await quiet())) return false;
      const [e] = await q("select count(*)::int as n from subscriptions where id = any($1) and status = 'EXPIRED'", [pendingAuth]);
      const [r] = await q("select count(*)::int as n from event_outbox where consumer = 'relay'");
      const [c] = await q("select count(*)::int as n from subscription_change_sessions where id = $1 and status = 'APPLIED'", [change.id]);
      return e.n === pendingAuth.length && r.n === 0 && c.n === 1;
    });
    const done = Date.now();
    const [undelivered] = await q(`select count(*)::int as n from webhook_deliveries where status not in ('SUCCEEDED','DELIVERED')`).catch(() => [{ n: -1 }]);
    const started = (firstWork - due) / 1000;
    record(
      label,
      `due work resumes within 2 sweep intervals (${(2 * SWEEP_MS) / 1000} s)`,
      `first renewal ${started.toFixed(1)} s after the loss`,
      started <= (2 * SWEEP_MS) / 1000 + 1,
    );
    record(
      label,
      "renewals, expiries, a NEXT_BILLING change and event relay all done",
      `${N} renewals + ${pendingAuth.length} expiries + 1 plan change + ${(await q("select count(*)::int as n from events"))[0].n - eventsBefore} events in ${((done - due) / 1000).toFixed(1)} s; deliveries not yet done = ${undelivered!.n}`,
      true,
    );
  }

  // ---- 4. PostgreSQL stop -m immediate under REST load and renewals
  {
    const results: { at: number; status: number; ms: number }[] = [];
    let loading = true;
    const loaders = Array.from({ length: 16 }, (_, i) =>
      (async () => {
        while (loading) {
          const at = Date.now();
          const res =
            i % 4 === 0
              ? await api
                  .post("/api/v1/subscription-plans", { name: `load ${at}`, amount: "2", currency: "USD", interval: "MONTH" })
                  .catch(() => ({ status: 0 }))
              : await api.get("/api/v1/subscriptions?limit=5").catch(() => ({ status: 0 }));
          results.push({ at, status: res.status, ms: Date.now() - at });
        }
      })(),
    );
    const pids = [...roles.values()].map((r) => r.child.pid);
    await advanceDay(); // a renewal burst: many transactions open at the stop
    await sleep(300);
    const stopAt = Date.now();
    await pgServer.stopImmediate();
    const ready = { gateway: false, services: false, workers: false };
    const outageEnd = stopAt + OUTAGE_S * 1000;
    while (Date.now() < outageEnd) {
      if ((await admin.get("/readyz")).status === 503) ready.gateway = true;
      if ((await serviceCheck(`http://127.0.0.1:${servicesPort}`, 2000)()) !== "ok") ready.services = true;
      if (
        (await fetch(`http://127.0.0.1:${workerHealth[0]}/readyz`).then(
          (r) => r.status,
          () => 0,
        )) === 503
      )
        ready.workers = true;
      await sleep(500);
    }
    // Responses that end before the restart begins are the outage's; start() returns only once PostgreSQL has
    // accepted connections for a while, and requests may rightly succeed in between.
    const restartAt = Date.now();
    await pgServer.start();
    const startAt = Date.now();
    // Recovered: the requests of the last 2 s succeed (90 %: with DB_POOL_MAX=5 and a renewal backlog draining at the
    // same time, a request may still find no slot within DB_CONNECT_TIMEOUT_MS and answer 503, by design).
    const ok = (r: { status: number }) => r.status >= 200 && r.status < 300;
    const recovered = await until("requests succeed again", 60_000, async () => {
      const recent = results.filter((r) => r.at > Date.now() - 2000 && r.at > startAt);
      return recent.length >= 5 && recent.filter(ok).length >= 0.9 * recent.length ? Date.now() : undefined;
    });
    const firstSuccess = results.find((r) => r.at >= startAt && ok(r));
    loading = false;
    await Promise.all(loaders);
    const during = results.filter((r) => r.at > stopAt + 200 && r.at + r.ms < restartAt);
    const bad = during.filter((r) => r.status !== 503 && r.status !== 504);
    const slowest = Math.max(0, ...during.map((r) => r.ms));
    // Requests cut by the outage (in flight at the stop) and those right after the restart: never a 500.
    const internal = results.filter((r) => r.status >= 500 && r.status !== 503 && r.status !== 504).length;
    const samePids = [...roles.values()].every((r, i) => r.child.pid === pids[i] && r.child.exitCode === null);
    record(
      "4 PostgreSQL stop -m immediate (10 s)",
      `every response 503/504 within ${RESPONSE_BOUND_MS / 1000} s`,
      `${during.length} responses, non-503/504 = ${bad.length}, slowest ${(slowest / 1000).toFixed(2)} s; 500s over the whole run = ${internal}`,
      bad.length === 0 && slowest <= RESPONSE_BOUND_MS && internal === 0,
    );
    record("4 PostgreSQL stop", "/readyz answers 503 (gateway, services, workers)", JSON.stringify(ready), ready.gateway && ready.services && ready.workers);
    record(
      "4 PostgreSQL stop",
      "requests succeed within 10 s of the restart, no process restarted",
      `first success ${firstSuccess ? ((firstSuccess.at + firstSuccess.ms - startAt) / 1000).toFixed(1) : "-"} s, 90 % succeeding ${((recovered - startAt) / 1000).toFixed(1)} s after start; processes unchanged = ${samePids}`,
      recovered - startAt <= 10_000 && samePids,
    );
    await until("renewals after the outage", 240_000, () => quiet());
    const [missingCreated] = await q(
      `select count(*)::int as n from subscriptions s where not exists (select 1 from events e where e.type = 'subscription.created' and e.data->>'id' = s.id::text)`,
    );
    const [missingLedger] = await q(
      `select count(*)::int as n from subscription_charges c where c.status = 'SUCCEEDED' and coalesce(c.asset_amount, 0) > 0
          and not exists (select 1 from ledger_transactions t where t.idempotency_key = 'subscription-charge-' || c.id::text)`,
    );
    const b = await books();
    const dup = await duplicates();
    record(
      "4 PostgreSQL stop",
      "no partial writes; exactly once; books clean",
      `missing created events = ${missingCreated!.n}, SUCCEEDED without ledger = ${missingLedger!.n}, duplicates = ${dup}, reconciliation ${b.reconciliation}`,
      missingCreated!.n === 0 && missingLedger!.n === 0 && dup === 0 && b.reconciliation === "ok" && b.ledgerOk,
    );
  }

  // ---- 5. a webhook receiver answering 500, then closed, then 200
  {
    const m2 = (await admin.post("/admin/v1/merchants", { name: "Webhooks" })).body;
    const api2 = apiClient(base, { "x-api-key": m2.apiKey });
    const flaky = await startReceiver();
    const ep = (await api2.post("/api/v1/webhook-endpoints", { url: flaky.url })).body;
    flaky.mode = "fail";
    const t0 = Date.now();
    for (let i = 0; i < 10; i++) await api2.post("/api/v1/subscription-plans", { name: `hooked ${i}`, amount: "3", currency: "USD", interval: "MONTH" });
    const ids = (await q("select id from events where merchant_id = $1", [m2.id])).map((r) => r.id as string);
    await until("receiver sees failing attempts", 30_000, async () => flaky.failures > 5);
    await flaky.setMode("closed");
    await sleep(4000);
    await flaky.setMode("ok");
    await until("every event delivered", 120_000, async () => ids.every((id) => flaky.delivered.has(id)));
    const wh = new Webhook(ep.secret);
    let badSig = 0;
    for (const d of flaky.okBodies) {
      try {
        wh.verify(d.body, d.headers as Record<string, string>);
      } catch {
        badSig += 1;
      }
    }
    record(
      "5 webhook receiver 500 → closed → 200",
      "every event delivered once it answers 200, signatures valid",
      `${ids.length}/${ids.length} delivered after ${flaky.failures} failed attempts in ${((Date.now() - t0) / 1000).toFixed(1)} s, bad signatures = ${badSig}`,
      badSig === 0,
    );
    await flaky.close();
    void endpoint;
  }

  // ---- 6. SIGTERM of each role during load
  {
    await advanceDay();
    const period = (await q("select max(next_period_index)::int as p from subscriptions where status = 'ACTIVE'"))[0].p as number;
    const exits: string[] = [];
    let clean = true;
    for (const name of ["workers-a", "services", "gateway", "workers-b"]) {
      const role = roles.get(name)!;
      const t = Date.now();
      role.child.kill("SIGTERM");
      const code = await exited(role.child);
      const s = (Date.now() - t) / 1000;
      exits.push(`${name} ${code} in ${s.toFixed(1)} s`);
      if (code !== 0 || s > 30) clean = false;
      startRole(name, role.args, role.extra);
      if (name === "gateway") await until("gateway back", 30_000, async () => (await admin.get("/healthz")).status === 200);
    }
    record("6 SIGTERM of each role under renewals", "exits 0 within its 30 s grace", exits.join("; "), clean);
    await until("renewals after restarts", 240_000, async () => (await periodsPaid(period - 1)) === N && (await quiet()));
    const b = await books();
    const dup = await duplicates();
    const wrong = await wrongBalances();
    record(
      "6 SIGTERM",
      "nothing lost: all renewed, exactly once, balances and books exact",
      `duplicates = ${dup}, wrong balances = ${wrong}, reconciliation ${b.reconciliation}`,
      dup === 0 && wrong === 0 && b.reconciliation === "ok" && b.ledgerOk,
    );
  }
  rpc.close();
  await receiver.close();
  console.log(`\nfault suite: ${N} subscriptions, sweep interval ${SWEEP_MS} ms, ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

/** A webhook receiver whose behaviour the suite switches: answer 200, answer 500, or refuse connections. */
async function startReceiver() {
  const state = {
    mode: "ok" as "ok" | "fail" | "closed",
    failures: 0,
    delivered: new Set<string>(),
    okBodies: [] as { body: string; headers: http.IncomingHttpHeaders }[],
    url: "",
    server: undefined as http.Server | undefined,
    port: 0,
    async setMode(mode: "ok" | "fail" | "closed") {
      if (mode === "closed" && this.server) {
        const s = this.server;
        this.server = undefined;
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      } else if (mode !== "closed" && !this.server) {
        await listen(this.port);
      }
      this.mode = mode;
    },
    async close() {
      await this.setMode("closed");
    },
  };
  const listen = (port: number) =>
    new Promise<void>((resolve) => {
      const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c) => chunks.push(c));
        req.on("end", () => {
          if (state.mode === "fail") {
            state.failures += 1;
            res.writeHead(500).end();
            return;
          }
          state.delivered.add(String(req.headers["webhook-id"]));
          state.okBodies.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers });
          res.writeHead(200).end("ok");
        });
      });
      server.listen(port, "127.0.0.1", () => {
        state.port = (server.address() as AddressInfo).port;
        state.server = server;
        resolve();
      });
    });
  await listen(0);
  state.url = `http://127.0.0.1:${state.port}/hooks`;
  return state;
}

async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

async function cleanup() {
  for (const { child } of roles.values()) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await Promise.all([...roles.values()].map((r) => exited(r.child)));
  await db?.end().catch(() => {});
  await redis?.stop().catch(() => {});
  await pgServer?.destroy().catch(() => {});
}

function printTable() {
  const widths = [0, 1, 2].map((i) => Math.max(...table.map((r) => [r.fault, r.invariant, r.measured][i]!.length), [8, 9, 8][i]!));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  console.log(line(["fault", "invariant", "measured"]).replace(/\|$/, "| result |"));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|--------|`);
  for (const r of table) console.log(`${line([r.fault, r.invariant, r.measured])} ${r.ok ? "PASS  " : "FAIL  "} |`);
}

let failed = false;
try {
  await main();
} catch (err) {
  failed = true;
  console.error("fault suite aborted:", err);
} finally {
  await cleanup();
  printTable();
  if (table.some((r) => !r.ok)) failed = true;
  console.log(failed ? "FAILED" : "all invariants hold");
  process.exit(failed ? 1 : 0);
}

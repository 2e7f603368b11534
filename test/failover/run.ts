/**
 * The failover suite (`npm run test:failover`): a highly available
 * PostgreSQL of its own (etcd, two Patroni nodes with synchronous
 * replication, HAProxy routing to the leader; test/support/patroni-cluster.ts),
 * its own redis-server, and the gateway, services and two workers processes
 * started as separate processes on the HAProxy address. Then:
 *
 * 1. under REST load and a renewal burst the primary node is killed
 *    (`kill -9` of its Patroni agent, postmaster and backends: a machine
 *    lost); Patroni promotes the standby once the leader key expires;
 * 2. the killed node's agent is started again and it rejoins as a standby;
 * 3. a planned switchover back under load and another renewal burst: the
 *    primary is demoted to a read-only standby while clients still reach it.
 *
 * Invariants: during a switch every answer is 503 (never a 500), requests
 * succeed again within 30 s of the promotion with no process restarted, no
 * renewal is lost or charged twice, balances exact, ledger and reconciliation
 * clean, every event relayed. Never touches the shared servers; ends only the
 * processes it started. Prints a table; exits 1 when an invariant fails.
 *
 * Sizes: FAILOVER_SUBSCRIPTIONS (default 40), FAILOVER_SWEEP_MS (default 1000).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdtempSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { SubscriptionsService, ApprovalOutcome } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";
import { apiClient } from "../support/http.ts";
import { eventually } from "../support/eventually.ts";
import { freePort, startRedisProcess, type RedisProcess } from "../support/redis-process.ts";
import { startPatroniCluster, type PatroniCluster, type PatroniNode } from "../support/patroni-cluster.ts";

const N = Number(process.env.FAILOVER_SUBSCRIPTIONS ?? 40);
const SWEEP_MS = Number(process.env.FAILOVER_SWEEP_MS ?? 1000);
const RECOVERY_BOUND_MS = 30_000;
/** A request during a switch answers within RPC_TIMEOUT_MS (below) plus slack. */
const RESPONSE_BOUND_MS = 5_000;
const BILLING = fileURLToPath(new URL("../../cli/billing.ts", import.meta.url));
const ADMIN_KEY = "failover-suite-admin-key";
const DAY = 86_400;

interface Row {
  step: string;
  invariant: string;
  measured: string;
  ok: boolean;
}
const table: Row[] = [];
function record(step: string, invariant: string, measured: string, ok: boolean) {
  table.push({ step, invariant, measured, ok });
  console.log(`${ok ? "PASS" : "FAIL"}  ${step}: ${invariant} — ${measured}`);
}

const logDir = mkdtempSync(join(tmpdir(), "billing-failover-"));
let cluster: PatroniCluster | undefined;
let redis: RedisProcess | undefined;
let db: pg.Pool | undefined;
let env: NodeJS.ProcessEnv;
const roles = new Map<string, ChildProcess>();

function startRole(name: string, args: string[], extra: NodeJS.ProcessEnv = {}): ChildProcess {
  const out = createWriteStream(join(logDir, `${name}.log`), { flags: "a" });
  const child = spawn(process.execPath, [BILLING, ...args], { env: { ...env, ...extra }, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  roles.set(name, child);
  return child;
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** `eventually`, where a check that throws (a read during the switch) counts as "not yet". */
const until = <T>(what: string, timeoutMs: number, check: () => Promise<T | undefined | false>, everyMs = 100): Promise<T> =>
  eventually(() => check().catch(() => undefined), timeoutMs, what, everyMs);

/** The suite's own reads go through HAProxy too: during a switch they fail and `until` asks again. */
const q = async <T = any>(sql: string, params: unknown[] = []): Promise<T[]> => (await db!.query(sql, params)).rows as T[];

interface Answer {
  at: number;
  end: number;
  status: number;
  write: boolean;
}

/**
 * REST load: 12 clients, a third writing plans, the rest reading subscriptions
 * by id and listing them (the batched and ORM read paths), 20 ms apart.
 */
function startLoad(base: string, apiKey: string, subs: string[]) {
  const answers: Answer[] = [];
  let running = true;
  const hit = async (method: string, path: string, body?: unknown): Promise<number> => {
    try {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { "x-api-key": apiKey, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(15_000),
      });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0; // the gateway did not answer at all
    }
  };
  const clients = Array.from({ length: 12 }, (_, i) =>
    (async () => {
      for (let k = 0; running; k++) {
        const at = Date.now();
        const write = i % 3 === 0;
        const status = write
          ? await hit("POST", "/api/v1/subscription-plans", { name: `load ${i}-${k}`, amount: "2", currency: "USD", interval: "MONTH" })
          : i % 3 === 1
            ? await hit("GET", `/api/v1/subscriptions/${subs[k % subs.length]}`)
            : await hit("GET", "/api/v1/subscriptions?limit=5");
        answers.push({ at, end: Date.now(), status, write });
        await sleep(20);
      }
    })(),
  );
  return {
    answers,
    async stop() {
      running = false;
      await Promise.all(clients);
    },
  };
}

const ok = (a: Answer) => a.status >= 200 && a.status < 300;
const byStatus = (answers: Answer[]) => {
  const counts = new Map<number, number>();
  for (const a of answers) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
  return (
    [...counts]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}×${n}`)
      .join(" ") || "none"
  );
};

/** Statuses per second of the requests sent from `from` to `to` (by when they were sent), one line per second. */
function timeline(answers: Answer[], from: number, to: number): string {
  const lines: string[] = [];
  for (let t = from - 1000; t < to; t += 1000) {
    const second = answers.filter((a) => a.at >= t && a.at < t + 1000);
    lines.push(`  ${((t - from) / 1000).toFixed(0).padStart(3)} s  ${byStatus(second)}`);
  }
  return lines.join("\n");
}

async function main() {
  const started = Date.now();
  cluster = await startPatroniCluster({ logDir });
  console.log(`cluster up in ${((Date.now() - started) / 1000).toFixed(1)} s (logs: ${logDir})`);
  redis = await startRedisProcess();
  const gatewayPort = await freePort();
  const servicesPort = await freePort();
  const databaseUrl = cluster.url.replace(/\/postgres$/, "/billing");
  env = {
    ...process.env,
    NODE_ENV: "development",
    METRICS_PORT: "0",
    SANDBOX: "true",
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    ADMIN_API_KEY: ADMIN_KEY,
    PORT: String(gatewayPort),
    SERVICES_PORT: String(servicesPort),
    PUBLIC_BASE_URL: `http://127.0.0.1:${gatewayPort}`,
    QUEUE_PREFIX: "failover",
    LOG_LEVEL: "warn",
    DB_POOL_MAX: "5",
    // The load is one merchant's, far past its default limit: 429s would hide what the switch answers.
    RATE_LIMIT_BURST: "100000",
    RATE_LIMIT_PER_SECOND: "100000",
    DB_STATEMENT_TIMEOUT_MS: "3000",
    DB_CONNECT_TIMEOUT_MS: "3000",
    RPC_TIMEOUT_MS: "4000",
    SWEEP_INTERVAL_MS: String(SWEEP_MS),
    RECONCILE_INTERVAL_MS: "60000",
    WEBHOOK_ALLOW_PRIVATE: "true",
    WEBHOOK_RETRY_SCHEDULE: "1,1,1,2,2,2,3,3,3,3,3,3",
    WEBHOOK_TIMEOUT_MS: "2000",
    CHARGE_NOTICE_DAYS: "0",
  };
  for (const key of ["TEST_DATABASE_URL", "TEST_REDIS_URL"]) delete env[key];
  const migrate = spawn(process.execPath, [BILLING, "migrate"], { env, stdio: "ignore" });
  if ((await exited(migrate)) !== 0) throw new Error("migrate failed");
  db = new pg.Pool({ connectionString: databaseUrl, max: 2, connectionTimeoutMillis: 2_000 });
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

  // ---- arrangement: N approved daily subscriptions, each customer funded for 100 periods; one webhook endpoint
  const merchant = (await admin.post("/admin/v1/merchants", { name: "Failover" })).body;
  const api = apiClient(base, { "x-api-key": merchant.apiKey });
  const receiver = await startReceiver();
  await api.post("/api/v1/webhook-endpoints", { url: receiver.url });
  const plan = (await api.post("/api/v1/subscription-plans", { name: "Daily", amount: "1", currency: "USD", interval: "DAY" })).body;
  const rpc = new RpcClients(env.INTERNAL_API_TOKEN ?? "dev-internal-token-change-me");
  const subsClient = rpc.client(SubscriptionsService, `http://127.0.0.1:${servicesPort}`);
  const subs: string[] = [];
  await inParallel(N, 8, async (i) => {
    const user = (await admin.post("/admin/v1/wallet-users", { email: `c${i}@failover.example`, password: "correct horse battery", pin: "246810" })).body;
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
  rpc.close();
  console.log(`arranged ${N} subscriptions in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const serviceNow = async () => new Date((await admin.get("/admin/v1/sandbox/clock")).body.now);
  const advanceDay = async () => {
    const res = await admin.post("/admin/v1/sandbox/clock/advance", { seconds: DAY });
    if (res.status !== 200) throw new Error(`clock advance: ${res.status}`);
  };
  const quiet = async () => {
    const now = await serviceNow();
    const [r] = await q(
      `select (select count(*)::int from subscriptions where status in ('ACTIVE','TRIALING') and next_billing_at <= $1) as due,
              (select count(*)::int from subscription_charges where status = 'PENDING') as pending`,
      [now],
    );
    return r.due === 0 && r.pending === 0;
  };
  const periodsPaid = async (period: number) =>
    (
      await q(
        `select count(distinct subscription_id)::int as n from subscription_charges where status = 'SUCCEEDED' and period_index = $1 and change_session_id is null`,
        [period],
      )
    )[0].n as number;
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
    return { ledgerOk: ledger.ok === true, reconciliation: rec.status as string };
  };
  const pids = () => [...roles.values()].map((c) => `${c.pid}:${c.exitCode ?? c.signalCode ?? "up"}`).join(",");

  /**
   * One switch under load: a renewal burst begins, `cause` switches the primary, and the answers are judged
   * against the promotion (the moment the new primary reports itself so on Patroni's REST API).
   */
  const underLoad = async (label: string, cause: (from: PatroniNode) => Promise<void>, expectedNew: (from: PatroniNode) => PatroniNode) => {
    const from = (await cluster!.primary())!;
    const period = (await q("select max(next_period_index)::int as p from subscriptions where status = 'ACTIVE'"))[0].p as number;
    const pidsBefore = pids();
    const load = startLoad(base, merchant.apiKey, subs);
    await sleep(1_000);
    await advanceDay();
    // The switch lands while the burst is under way: its first charges are opened.
    await until(
      "renewal burst begun",
      60_000,
      async () => (await q("select count(*)::int as n from subscription_charges where period_index = $1 and change_session_id is null", [period]))[0].n > 0,
      5,
    );
    const switchAt = Date.now();
    await cause(from);
    const target = expectedNew(from);
    const promotedAt = await until("promotion", 120_000, async () => ((await cluster!.primary())?.name === target.name ? Date.now() : undefined), 100);
    // Recovered: the requests of a 2 s window after the promotion all succeed.
    const recoveredAt = await until("requests succeed again", 120_000, async () => {
      const recent = load.answers.filter((a) => a.at > Date.now() - 2000 && a.at > promotedAt);
      return recent.length >= 10 && recent.every(ok) ? Date.now() : undefined;
    });
    await sleep(2_000);
    await load.stop();
    const answers = load.answers;
    const first503 = answers.filter((a) => a.status === 503 && a.end >= switchAt).sort((a, b) => a.end - b.end)[0];
    const firstOk = answers.filter((a) => ok(a) && a.at >= promotedAt).sort((a, b) => a.end - b.end)[0];
    // The switch: answers to requests sent after it began until the promotion. Requests the old primary still
    // served (a switchover demotes it only after a checkpoint) succeed; every other answer must be a 503.
    const during = answers.filter((a) => a.at >= switchAt && a.at <= promotedAt);
    const duringBad = during.filter((a) => !ok(a) && a.status !== 503);
    // Every request sent from the switch to the recovery answers within the bound, whatever it answers.
    const slowest = Math.max(0, ...answers.filter((a) => a.at >= switchAt && a.at <= recoveredAt).map((a) => a.end - a.at));
    const after = answers.filter((a) => a.at >= promotedAt);
    const afterUnavailable = after.filter((a) => !ok(a));
    const internal = answers.filter((a) => a.status === 0 || (a.status >= 500 && a.status !== 503));
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    record(label, "Patroni promotes the other node", `${from.name} → ${target.name}, promoted ${s(promotedAt - switchAt)} after the switch began`, true);
    record(
      label,
      `during the switch a request that fails answers 503, every one within ${RESPONSE_BOUND_MS / 1000} s; never a 500`,
      `first 503 ${first503 ? s(first503.end - switchAt) : "-"} after the switch; sent during the switch ${during.length}: ${byStatus(during)}; slowest answer until recovery ${s(slowest)}; whole run ${answers.length}: ${byStatus(answers)}`,
      duringBad.length === 0 && internal.length === 0 && slowest <= RESPONSE_BOUND_MS,
    );
    console.log(`${label}, answers per second from the switch (promotion at ${s(promotedAt - switchAt)}):\n${timeline(answers, switchAt, recoveredAt)}`);
    record(
      label,
      `requests succeed within ${RECOVERY_BOUND_MS / 1000} s of the promotion; no process restarted`,
      `first success ${firstOk ? s(firstOk.end - promotedAt) : "-"} after the promotion, all of a 2 s window ${s(recoveredAt - promotedAt)}; after the promotion ${byStatus(after)} (unavailable ${afterUnavailable.length}); processes unchanged = ${pids() === pidsBefore}`,
      !!firstOk && recoveredAt - promotedAt <= RECOVERY_BOUND_MS && pids() === pidsBefore,
    );
    const t = Date.now();
    await until("renewals done", 240_000, async () => (await periodsPaid(period)) === N && (await quiet()), 250);
    const dup = await duplicates();
    const wrong = await wrongBalances();
    const b = await books();
    const [unrelayed] = await q("select count(*)::int as n from event_outbox where consumer = 'relay'");
    record(
      label,
      "no renewal lost or charged twice; balances exact; ledger and reconciliation clean",
      `${N}/${N} renewed for period ${period} (${s(Date.now() - t)} after recovery), duplicates = ${dup}, wrong balances = ${wrong}, ledger ${b.ledgerOk ? "ok" : "BAD"}, reconciliation ${b.reconciliation}, events not relayed = ${unrelayed.n}`,
      dup === 0 && wrong === 0 && b.ledgerOk && b.reconciliation === "ok",
    );
  };

  // ---- 1. kill -9 of the primary node
  await underLoad(
    "1 kill -9 of the primary",
    (from) => cluster!.killNode(from),
    (from) => cluster!.nodes.find((n) => n !== from)!,
  );
  const killed = cluster.nodes.find((n) => !n.patroni)!;

  // ---- 2. the killed node comes back as a standby (pg_rewind), the service untouched
  {
    const t = Date.now();
    await cluster.restartNode(killed);
    const { primary, standby } = await cluster.waitHealthy(180_000);
    record(
      "2 the killed node rejoins",
      "as the synchronous standby of the new primary",
      `${standby.name} streaming from ${primary.name} ${((Date.now() - t) / 1000).toFixed(1)} s after its agent started`,
      standby.name === killed.name,
    );
  }

  // ---- 3. planned switchover back: the primary is demoted to a read-only standby under load
  await underLoad(
    "3 switchover (primary demoted)",
    () => cluster!.switchover(killed),
    () => killed,
  );

  // ---- writes that reached a read-only node (a demoted primary still routed to): PostgreSQL refused each (25006)
  {
    const refused = cluster.countInServerLogs(/ERROR: .*read-only transaction/);
    // Reported, not judged: how many reach a demoted node depends on timing; that none became a 500 is judged above.
    record("read-only node", "(reported) writes that reached a demoted node, refused by PostgreSQL (25006) and answered 503", `${refused} refused`, true);
  }

  // ---- webhooks: every event of the run delivered (signatures are the webhook suites' business)
  {
    const events = (await q("select id from events where merchant_id = $1", [merchant.id])).map((r) => r.id as string);
    await until("every event delivered", 120_000, async () => events.every((id) => receiver.delivered.has(id)), 250).catch(() => undefined);
    const missing = events.filter((id) => !receiver.delivered.has(id)).length;
    record("webhooks", "every event of the run delivered", `${events.length - missing}/${events.length} delivered`, missing === 0);
  }
  await receiver.close();
  console.log(`\nfailover suite: ${N} subscriptions, sweep interval ${SWEEP_MS} ms, ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

/** A webhook receiver answering 200 that records the event ids it got. */
async function startReceiver() {
  const delivered = new Set<string>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      delivered.add(String(req.headers["webhook-id"]));
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    delivered,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

async function inParallel(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

async function cleanup() {
  for (const child of roles.values()) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await Promise.all([...roles.values()].map((c) => exited(c)));
  await db?.end().catch(() => {});
  await redis?.stop().catch(() => {});
  await cluster?.stop().catch(() => {});
}

function printTable() {
  if (!table.length) return;
  const widths = [0, 1, 2].map((i) => Math.max(...table.map((r) => [r.step, r.invariant, r.measured][i]!.length), [4, 9, 8][i]!));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  console.log(line(["step", "invariant", "measured"]).replace(/\|$/, "| result |"));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|--------|`);
  for (const r of table) console.log(`${line([r.step, r.invariant, r.measured])} ${r.ok ? "PASS  " : "FAIL  "} |`);
}

let failed = false;
try {
  await main();
} catch (err) {
  failed = true;
  console.error("failover suite aborted:", err);
} finally {
  await cleanup();
  printTable();
  if (table.some((r) => !r.ok)) failed = true;
  console.log(failed ? "FAILED" : "all invariants hold");
  process.exit(failed ? 1 : 0);
}

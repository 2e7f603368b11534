/**
 * The service side of each bench figure (issue 16). Everything is seeded
 * through the public API, the admin API, the sandbox clock or the use cases
 * the API calls (approveAuthorization over RPC is what the hosted page calls;
 * recordEvent is the outbox use case): no SQL writes. SQL here only reads
 * results back (ids to read, counts for the correctness checks).
 */
import { profileWindow } from "./profile.ts";
import { spawn } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { startTestSystem, type TestSystem } from "../support/system.ts";
import { createPlan, createWalletUser, credit, subscriptionsRpc, tokenOf, type WalletUserFixture } from "../support/subscriptions.ts";
import { advanceBy, DAY } from "../support/billing.ts";
import { startWebhookWorkers } from "../support/webhook-workers.ts";
import { databaseCpuSeconds, machineCpuTicks } from "./proc-stats.ts";
import { recordEvent } from "../../services/events/record-event.ts";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { ApprovalOutcome, type SubscriptionsService } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import type { ApiClient } from "../support/http.ts";
import { loadConfig, type WorkerGroup } from "../../services/platform/config.ts";

export interface FigureResult {
  values: Record<string, number>;
  /** What was checked and whether it held. */
  correctness: string;
  ok: boolean;
  notes?: string;
}

/**
 * The all-in-one system, as `npm start` runs it (every service, the gateway and every worker group in one process),
 * with the settings `npm start` has by default (the test system's own are smaller: its pool, its sweep period).
 */
export const benchSystem = (env: Record<string, string> = {}, workerGroups?: WorkerGroup[]) => {
  const defaults = loadConfig({});
  return startTestSystem({
    env: { DB_POOL_MAX: String(defaults.dbPoolMax), SWEEP_INTERVAL_MS: String(defaults.sweepIntervalMs), ...env },
    ...(workerGroups && { workerGroups }),
  });
};

/** Runs the baselines' autocannon wrapper in a child process against the gateway. */
export async function loadChild(spec: { url: string; method: "GET" | "POST"; apiKey: string; ids?: string[]; body?: Record<string, unknown> }) {
  // The spec (with every id to read) goes through a file: too big for a command line.
  const specFile = path.join(tmpdir(), `bench-load-${randomUUID()}.json`);
  await writeFile(specFile, JSON.stringify(spec));
  const child = spawn(process.execPath, [fileURLToPath(new URL("./load-child.ts", import.meta.url)), specFile], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  await rm(specFile, { force: true });
  if (code !== 0) throw new Error(`load generator failed (${code}): ${err.slice(-1500)}`);
  return JSON.parse(out.trim().split("\n").at(-1)!) as Record<string, number>;
}

/**
 * Approves an authorization as the hosted page's customer does on a loaded machine: a retryable answer (503, a
 * payment in flight) is tried again; "already used" means an earlier try went through (its charge finished by the
 * stale-charge sweep).
 */
export async function approveAsCustomer(
  client: Pick<Client<typeof SubscriptionsService>, "approveAuthorization">,
  request: { token: string; walletUserId: string; fundingAsset: string },
): Promise<void> {
  for (let tries = 0; ; tries += 1) {
    try {
      const res = await client.approveAuthorization(request);
      if (res.outcome !== ApprovalOutcome.APPROVED) throw new Error(`approval refused: ${res.message}`);
      return;
    } catch (err) {
      if (err instanceof ConnectError && err.message.includes("already been used")) return;
      const retryable = err instanceof ConnectError && (err.code === Code.Unavailable || err.message.includes("being processed"));
      if (!retryable || tries >= 50) throw err;
      await sleep(200);
    }
  }
}

/** Runs `fn(i)` for i in [0, count) with `concurrency` in flight. */
export async function pool(count: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (let i = next++; i < count; i = next++) await fn(i);
    }),
  );
}

async function createSubscriptions(api: ApiClient, planId: string, users: WalletUserFixture[], count: number) {
  const made: { id: string; url: string; user: WalletUserFixture }[] = [];
  await pool(count, 20, async (i) => {
    const user = users[i % users.length]!;
    const res = await api.post("/api/v1/subscriptions", {
      externalReference: `seed-${i}-${randomUUID().slice(0, 8)}`,
      planId,
      walletUserId: user.id,
      successUrl: "https://merchant.example/ok",
      cancelUrl: "https://merchant.example/no",
    });
    if (res.status !== 201) throw new Error(`seed create failed: ${res.status} ${res.text}`);
    made.push({ id: res.body.subscriptionId, url: res.body.authorizationUrl, user });
  });
  return made;
}

const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
const rss = () => mib(process.memoryUsage().rss);
/** The bench process's memory: RSS, and what V8's heap and the buffers outside it hold of it. */
const memory = () => {
  const m = process.memoryUsage();
  return { rss_mib: mib(m.rss), heap_total_mib: mib(m.heapTotal), heap_used_mib: mib(m.heapUsed), external_mib: mib(m.external) };
};

/** A running API to load, whatever its shape (in this process, or its roles as processes). */
export interface ApiTarget {
  baseUrl: string;
  apiKey: string;
  planId: string;
  userId: string;
  sql<T>(query: string): Promise<T[]>;
}

/** B3: the baselines' load generator creating subscriptions (a fresh Idempotency-Key each), then the books checked. */
export async function createLoad(t: ApiTarget): Promise<FigureResult> {
  const r = await loadChild({
    url: `${t.baseUrl}/api/v1/subscriptions`,
    method: "POST",
    apiKey: t.apiKey,
    body: { planId: t.planId, walletUserId: t.userId, successUrl: "https://merchant.example/ok", cancelUrl: "https://merchant.example/no" },
  });
  const [row] = await t.sql<{ rows: number; refs: number; events: number }>(
    "select count(*)::int as rows, count(distinct external_reference)::int as refs, (select count(*)::int from events where type = 'subscription.created') as events from subscriptions",
  );
  return {
    values: { req_per_s: r.req_per_s!, p99_ms: r.p99_ms! },
    ok: r.non_2xx === 0 && r.errors === 0 && row!.rows === row!.refs && row!.events === row!.rows,
    correctness: `non2xx ${r.non_2xx}, errors ${r.errors}, ${row!.rows} rows, dup refs ${row!.rows - row!.refs}, events ${row!.events}`,
  };
}

/** B1: the baselines' load generator reading random subscriptions of those B3 created. */
export async function readLoad(t: ApiTarget): Promise<FigureResult> {
  const ids = (await t.sql<{ id: string }>("select id from subscriptions")).map((r) => r.id);
  const r = await loadChild({ url: `${t.baseUrl}/api/v1/subscriptions`, method: "GET", apiKey: t.apiKey, ids });
  return {
    values: { req_per_s: r.req_per_s!, p99_ms: r.p99_ms! },
    ok: r.non_2xx === 0 && r.errors === 0,
    correctness: `non2xx ${r.non_2xx}, errors ${r.errors}`,
    notes: `random ids over ${ids.length} rows (those B3 created)`,
  };
}

/** B3 then B1 on one system: B3 creates the rows B1 reads. */
export class ApiFigures {
  sys!: TestSystem;
  apiKey!: string;
  planId!: string;
  userId!: string;
  /** RSS once the system is up, before any load. */
  idleRssMib = 0;

  async start() {
    this.sys = await benchSystem({}, ["scheduler", "webhooks", "payments", "renewals"]);
    const merchant = await this.sys.createMerchant("Bench");
    this.apiKey = merchant.apiKey;
    this.planId = (await createPlan(merchant.api, { amount: "1" })).id;
    this.userId = (await createWalletUser(this.sys)).id;
    this.idleRssMib = rss();
  }

  async create(): Promise<FigureResult> {
    const result = await createLoad(this.target());
    result.values.rss_mib = rss();
    return result;
  }

  async read(): Promise<FigureResult> {
    const result = await readLoad(this.target());
    Object.assign(result.values, memory(), { rss_idle_mib: this.idleRssMib });
    result.notes = `${result.notes} (the baseline reads 100k)`;
    return result;
  }

  private target(): ApiTarget {
    return { baseUrl: this.sys.baseUrl, apiKey: this.apiKey, planId: this.planId, userId: this.userId, sql: (q) => this.sys.sql(q) };
  }

  async close() {
    await this.sys?.close();
  }
}

/** B6: K authorizations due at one instant on the sandbox clock; lag = advance → expired. */
export async function expiryFigure(k: number): Promise<FigureResult> {
  const sys = await benchSystem();
  try {
    const { api } = await sys.createMerchant("Bench");
    const plan = await createPlan(api, { amount: "1" });
    const user = await createWalletUser(sys);
    await createSubscriptions(api, plan.id, [user], k);
    const [{ max }] = (await sys.sql<{ max: string }>("select max(expires_at) as max from subscription_authorizations where status = 'PENDING'")) as any;
    const now = new Date((await sys.admin.get("/admin/v1/sandbox/clock")).body.now);
    const seconds = Math.ceil((new Date(max).getTime() - now.getTime()) / 1000) + 1;
    const stopProfile = await profileWindow("expiry");
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const lags: number[] = [];
    await advanceBy(sys, seconds);
    let done = 0;
    while (done < k) {
      const [row] = await sys.sql<{ n: number }>("select count(*)::int as n from subscriptions where status = 'EXPIRED'");
      const t = performance.now() - started;
      for (; done < row!.n; done++) lags.push(t);
      if (t > 300_000) break;
      if (done < k) await sleep(20);
    }
    const cpu = process.cpuUsage(cpuBefore);
    await stopProfile();
    const p = (q: number) => lags[Math.min(lags.length - 1, Math.ceil(q * k) - 1)] ?? NaN;
    const [check] = await sys.sql<{ events: number; auth: number }>(
      "select (select count(*)::int from events where type = 'subscription.expired') as events, (select count(*)::int from subscription_authorizations where status = 'EXPIRED') as auth",
    );
    const ok = lags.length === k && check!.events === k && check!.auth === k;
    const notes = `B6: lag p1 ${p(0.01).toFixed(0)} p10 ${p(0.1).toFixed(0)} p50 ${p(0.5).toFixed(0)} ms; the service process used ${((cpu.user + cpu.system) / 1000 / k).toFixed(2)} ms of CPU per expiry`;
    return {
      values: { lag_p50_ms: p(0.5), lag_p99_ms: p(0.99) },
      ok,
      notes,
      correctness: `${lags.length}/${k} expired, ${check!.events} expired events, ${check!.auth} authorizations`,
    };
  } finally {
    await sys.close();
  }
}

/**
 * B7: `events` committed first, then the webhooks workers start; the clock
 * runs until the receiver has every one. The endpoint takes `maxInFlight`
 * requests at once (the baseline's sender keeps 50 in flight).
 */
export async function webhooksFigure(events: number, maxInFlight: number): Promise<FigureResult> {
  const sys = await benchSystem({ SWEEP_INTERVAL_MS: "1000" }, []);
  const sink = spawn(process.execPath, [fileURLToPath(new URL("./sink-child.ts", import.meta.url))], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      sink.stdout.once("data", (d: Buffer) => resolve(Number(d.toString().trim())));
      sink.once("exit", (code) => reject(new Error(`sink exited (${code})`)));
    });
    const sinkUrl = `http://127.0.0.1:${port}`;
    const stats = async () => (await (await fetch(`${sinkUrl}/stats`)).json()) as { received: number; distinct: number };
    const { id: merchantId, api } = await sys.createMerchant("Bench");
    const created = await api.post("/api/v1/webhook-endpoints", { url: `${sinkUrl}/hooks`, maxInFlight });
    if (created.status !== 201) throw new Error(`endpoint create failed: ${created.status} ${created.text}`);
    const ctx = sys.context();
    await ctx.em.transactional(async (em) => {
      for (let i = 0; i < events; i++) {
        recordEvent(em, ctx.clock, {
          merchantId,
          type: "subscription.charge_succeeded",
          data: { id: `sub_${i}`, amount: "9.99", currency: "USD", status: "ACTIVE", pad: "x".repeat(700) },
        });
      }
    });
    const stopProfile = await profileWindow("webhooks");
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const workers = await startWebhookWorkers(sys);
    try {
      let got = await stats();
      for (const deadline = started + 600_000; got.received < events && performance.now() < deadline; got = await stats()) await sleep(20);
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      await stopProfile();
      // The last answers are recorded just after the sink got them: wait for the books to close.
      let row: { ok: number } | undefined;
      for (const deadline = performance.now() + 30_000; performance.now() < deadline; await sleep(50)) {
        [row] = await sys.sql<{ ok: number }>("select count(*)::int as ok from webhook_deliveries where status = 'SUCCEEDED'");
        if (row!.ok >= events) break;
      }
      got = await stats();
      const ok = got.distinct === events && got.received === events && row!.ok === events;
      return {
        values: { deliveries_per_s: events / seconds },
        ok,
        correctness: `${got.received} received, ${got.distinct} distinct, ${row!.ok} succeeded`,
        notes: `B7 endpoint maxInFlight ${maxInFlight} (BENCH_WEBHOOK_MAX_IN_FLIGHT; the API default is 10); sink in its own process; the service process used ${((cpu.user + cpu.system) / 1000 / events).toFixed(2)} ms of CPU per delivery`,
      };
    } finally {
      await workers.close();
    }
  } finally {
    sink.kill("SIGTERM");
    await sys.close();
  }
}

/** B8: K approved subscriptions (first payment taken), one month advanced, until the last renewal charge settled. */
export async function renewalsFigure(k: number): Promise<FigureResult> {
  const sys = await benchSystem();
  const rpc = subscriptionsRpc(sys);
  try {
    const { api } = await sys.createMerchant("Bench");
    const plan = await createPlan(api, { amount: "1.5", interval: "MONTH" });
    const users: WalletUserFixture[] = [];
    for (let i = 0; i < Math.min(50, k); i++) users.push(await createWalletUser(sys));
    const perUser = Math.ceil(k / users.length) * 4;
    for (const u of users) await credit(sys, u.id, "USDT_TRON", String(perUser));
    const subs = await createSubscriptions(api, plan.id, users, k);
    await pool(subs.length, 10, async (i) => {
      const s = subs[i]!;
      await approveAsCustomer(rpc.client, { token: tokenOf(s.url), walletUserId: s.user.id, fundingAsset: "USDT_TRON" });
    });
    // Every first payment settled (a retried one may still be finishing) before the clock moves.
    for (const deadline = performance.now() + 300_000; ; await sleep(200)) {
      const [row] = await sys.sql<{ n: number }>("select count(*)::int as n from subscriptions where status = 'ACTIVE'");
      if (row!.n >= k) break;
      if (performance.now() > deadline) throw new Error(`renewals: only ${row!.n} of ${k} subscriptions active after seeding`);
    }
    // Done is watched on the service's own charge counter (in this process: free), then confirmed once in the
    // database. Counting the table every 100 ms cost the database a scan of every charge each time, ~2.5 s of its
    // CPU in a 10-second run that the database's CPU limits: the harness was slowing what it measured.
    const succeeded = async () =>
      (await sys.system.metrics!.charges.get()).values.filter((v) => v.labels.outcome === "succeeded").reduce((n, v) => n + v.value, 0);
    const before = await succeeded();
    const stopProfile = await profileWindow("renewals");
    const cpuBefore = process.cpuUsage();
    const pgBefore = await databaseCpuSeconds(sys.database.name);
    const machineBefore = await machineCpuTicks();
    const started = performance.now();
    await advanceBy(sys, 31 * DAY + 60);
    for (;;) {
      if ((await succeeded()) - before >= k) {
        const [row] = await sys.sql<{ n: number }>("select count(*)::int as n from subscription_charges where period_index = 1 and status = 'SUCCEEDED'");
        if (row!.n >= k) break;
      }
      if (performance.now() - started > 900_000) throw new Error("renewals: gave up after 15 minutes");
      await sleep(20);
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const pgMsPerRenewal = (((await databaseCpuSeconds(sys.database.name)) - pgBefore) * 1000) / k;
    const machine = await machineCpuTicks();
    const busy = (machine.busy - machineBefore.busy) / (machine.total - machineBefore.total);
    await stopProfile();
    const [c] = await sys.sql<{ n: number; distinct_periods: number; pending: number }>(
      "select count(*) filter (where status = 'SUCCEEDED')::int as n, count(distinct (subscription_id, period_index)) filter (where status = 'SUCCEEDED')::int as distinct_periods, count(*) filter (where status = 'PENDING')::int as pending from subscription_charges",
    );
    const ledger = await sys.admin.get("/admin/v1/ledger/check");
    const ok = c!.n === c!.distinct_periods && c!.n === 2 * k && ledger.body.ok === true;
    const cpuMsPerRenewal = (cpu.user + cpu.system) / 1000 / k;
    return {
      values: { seconds },
      ok,
      notes: `B8: the service process used ${cpuMsPerRenewal.toFixed(2)} ms of CPU per renewal (steadier than seconds on a shared machine), PostgreSQL's backends of the bench database ${pgMsPerRenewal.toFixed(2)} ms; the machine's CPUs were ${(busy * 100).toFixed(0)} % busy over the window`,
      correctness: `${c!.n} succeeded charges for ${2 * k} periods, duplicates ${c!.n - c!.distinct_periods}, pending ${c!.pending}, ledger ok=${ledger.body.ok}`,
    };
  } finally {
    rpc.close();
    await sys.close();
  }
}

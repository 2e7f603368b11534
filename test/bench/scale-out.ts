/**
 * Does adding a renewals worker help? (issue 27) `npm run bench:scale-out`: the deployed shape (split-roles.ts:
 * gateway, services, a scheduler+payments workers process) with SCALE_SUBSCRIPTIONS (100,000) monthly
 * subscriptions seeded through the API, then one billing date with ONE `WORKER_GROUPS=renewals` process and the
 * next with TWO. For each: the time from the clock advance to the last renewal charged, the CPU each process and
 * PostgreSQL used per renewal (from /proc: run it on a quiet machine), and the database's share of that CPU. Ends
 * with the ledger check. Not part of CI; prints a table. SCALE_THROUGH_API (2,000): how many are seeded through the
 * API, the rest are copies of those (cloneSubscriptions).
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { SplitSystem, type RoleProcess } from "./split-roles.ts";
import { cpuOfAll, cpuSeconds } from "./proc-stats.ts";
import { approveAsCustomer, pool } from "./figures.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";
import { SubscriptionsService } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { createPlan, createWalletUser, credit, tokenOf, type WalletUserFixture } from "../support/subscriptions.ts";
import type { TestSystem } from "../support/system.ts";

const SUBSCRIPTIONS = Number(process.env.SCALE_SUBSCRIPTIONS ?? 100_000);
/** Seeded through the API (create + approval, first payment charged); the rest are copies of them (cloneSubscriptions). */
const THROUGH_API = Math.min(SUBSCRIPTIONS, Number(process.env.SCALE_THROUGH_API ?? 2_000));
const TOKEN = "scale-out-internal-token-0123456789";
const DAY = 86_400;
const log = (s: string) => process.stderr.write(`[scale-out] ${s}\n`);

interface Round {
  workers: number;
  seconds: number;
  cpu: Record<string, number>;
}

async function billOnce(sys: SplitSystem, roles: RoleProcess[], periodIndex: number, workers: number): Promise<Round> {
  const before: Record<string, number> = {};
  for (const r of roles) before[r.name] = (await cpuSeconds(r.child.pid!)) ?? 0;
  before.postgres = await cpuOfAll("postgres");
  before.redis = await cpuOfAll("redis-server");
  const started = performance.now();
  const res = await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 31 * DAY + 60 });
  if (res.status !== 200) throw new Error(`clock advance failed: ${res.status} ${res.text}`);
  for (;;) {
    const [row] = await sys.sql<{ n: number }>("select count(*)::int as n from subscription_charges where period_index = $1 and status = 'SUCCEEDED'", [
      periodIndex,
    ]);
    if (row!.n >= SUBSCRIPTIONS) break;
    if (performance.now() - started > 1_800_000) throw new Error(`period ${periodIndex}: ${row!.n} of ${SUBSCRIPTIONS} after 30 minutes`);
    // Once a second: the count reads every charge so far, and at 200 ms it cost PostgreSQL a quarter of a core
    // (78 s of a round of 100,000: pg_stat_statements), charged to the service's figures.
    await sleep(1000);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu: Record<string, number> = {};
  for (const r of roles) cpu[r.name] = ((await cpuSeconds(r.child.pid!)) ?? 0) - before[r.name]!;
  cpu.postgres = (await cpuOfAll("postgres")) - before.postgres;
  cpu.redis = (await cpuOfAll("redis-server")) - before.redis;
  return { workers, seconds, cpu };
}

/**
 * `count` more ACTIVE subscriptions, each a copy of one seeded through the API (same merchant, plan, customer,
 * funding asset and billing date; its own id, external reference and approved authorization). Seeding 100,000
 * through the API's approval takes the better part of an hour on this machine and measures nothing here; the
 * copies bill exactly as their originals do (period 1 next). The bench's own shortcut, never the service's.
 */
async function cloneSubscriptions(sys: SplitSystem, count: number): Promise<void> {
  if (count <= 0) return;
  const client = await sys.sqlPool.connect();
  try {
    const columns = async (table: string) =>
      (
        await client.query<{ name: string }>(
          "select column_name as name from information_schema.columns where table_schema = 'public' and table_name = $1 order by ordinal_position",
          [table],
        )
      ).rows.map((r) => r.name);
    const pick = (cols: string[], replaced: Record<string, string>, alias: string) => cols.map((c) => replaced[c] ?? `${alias}.${c}`).join(", ");
    await client.query("begin");
    await client.query(
      `create temp table clone_map on commit drop as
         select s.id as src_id, gen_random_uuid() as new_id, g as copy
           from subscriptions s cross join generate_series(1, $1::int) g
          where s.status = 'ACTIVE'
          order by g, s.id limit $2`,
      [Math.ceil(count / THROUGH_API), count],
    );
    const subscriptionColumns = await columns("subscriptions");
    await client.query(
      `insert into subscriptions (${subscriptionColumns.join(", ")})
       select ${pick(subscriptionColumns, { id: "m.new_id", external_reference: "s.external_reference || '-copy-' || m.copy" }, "s")}
         from clone_map m join subscriptions s on s.id = m.src_id`,
    );
    const authorizationColumns = await columns("subscription_authorizations");
    await client.query(
      `insert into subscription_authorizations (${authorizationColumns.join(", ")})
       select ${pick(authorizationColumns, { id: "gen_random_uuid()", subscription_id: "m.new_id", token_hash: "md5(random()::text) || md5(random()::text)" }, "a")}
         from clone_map m join subscription_authorizations a on a.subscription_id = m.src_id`,
    );
    await client.query("commit");
  } catch (err) {
    await client.query("rollback").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

const sys = new SplitSystem();
const rpc = new RpcClients(TOKEN);
try {
  await sys.start({ INTERNAL_API_TOKEN: TOKEN });
  const roles = [
    await sys.spawnRole("services", "services"),
    await sys.spawnRole("gateway", "gateway"),
    await sys.spawnRole("scheduler+payments", "workers", { WORKER_GROUPS: "scheduler,payments" }),
    await sys.spawnRole("renewals-1", "workers", { WORKER_GROUPS: "renewals" }),
  ];
  const asTest = sys as unknown as TestSystem;
  const { api } = await sys.createMerchant("Scale");
  const plan = await createPlan(api, { amount: "1.5", interval: "MONTH" });
  const users: WalletUserFixture[] = [];
  for (let i = 0; i < 50; i++) users.push(await createWalletUser(asTest));
  for (const u of users) await credit(asTest, u.id, "USDT_TRON", String(Math.ceil(SUBSCRIPTIONS / 50) * 6));
  const subscriptions = rpc.client(SubscriptionsService, `http://127.0.0.1:${sys.servicesPort}`);
  const seedStarted = performance.now();
  let seeded = 0;
  await pool(THROUGH_API, 20, async (i) => {
    const user = users[i % users.length]!;
    const created = await api.post("/api/v1/subscriptions", {
      externalReference: `scale-${i}-${randomUUID().slice(0, 8)}`,
      planId: plan.id,
      walletUserId: user.id,
      successUrl: "https://merchant.example/ok",
      cancelUrl: "https://merchant.example/no",
    });
    if (created.status !== 201) throw new Error(`seed create failed: ${created.status} ${created.text}`);
    await approveAsCustomer(subscriptions, { token: tokenOf(created.body.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" });
    if (++seeded % 1_000 === 0) log(`${seeded} seeded through the API (${((performance.now() - seedStarted) / 1000).toFixed(0)} s)`);
  });
  for (;;) {
    const [row] = await sys.sql<{ n: number }>("select count(*)::int as n from subscriptions where status = 'ACTIVE'");
    if (row!.n >= THROUGH_API) break;
    await sleep(500);
  }
  await cloneSubscriptions(sys, SUBSCRIPTIONS - THROUGH_API);
  log(
    `seeded ${SUBSCRIPTIONS} (${THROUGH_API} through the API) in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s; billing with one renewals process`,
  );
  const one = await billOnce(sys, roles, 1, 1);
  roles.push(await sys.spawnRole("renewals-2", "workers", { WORKER_GROUPS: "renewals" }));
  log("billing with two renewals processes");
  const two = await billOnce(sys, roles, 2, 2);
  const [books] = await sys.sql<{ n: number; periods: number; pending: number }>(
    "select count(*) filter (where status = 'SUCCEEDED')::int as n, count(distinct (subscription_id, period_index)) filter (where status = 'SUCCEEDED')::int as periods, count(*) filter (where status = 'PENDING')::int as pending from subscription_charges",
  );
  const ledger = await sys.admin.get("/admin/v1/ledger/check");

  const names = [...new Set([...Object.keys(one.cpu), ...Object.keys(two.cpu)])];
  const perRenewal = (r: Round, name: string) => (((r.cpu[name] ?? 0) * 1000) / SUBSCRIPTIONS).toFixed(3);
  const total = (r: Round) => Object.values(r.cpu).reduce((a, b) => a + b, 0);
  console.log(`\n${SUBSCRIPTIONS} renewals due at once, split roles (node ${process.version}); CPU in ms per renewal`);
  console.log(["renewals processes", "seconds", "renewals/s", ...names, "all", "database share"].join(" | "));
  for (const r of [one, two]) {
    console.log(
      [
        r.workers,
        r.seconds.toFixed(1),
        (SUBSCRIPTIONS / r.seconds).toFixed(0),
        ...names.map((n) => perRenewal(r, n)),
        ((total(r) * 1000) / SUBSCRIPTIONS).toFixed(3),
        `${((100 * (r.cpu.postgres ?? 0)) / total(r)).toFixed(0)} %`,
      ].join(" | "),
    );
  }
  console.log(
    `books: ${books!.n} succeeded charges for ${books!.periods} distinct periods (expected ${2 * SUBSCRIPTIONS + THROUGH_API}: the copies have no first payment), pending ${books!.pending}, ledger ok=${ledger.body.ok}`,
  );
  console.log(`speed-up with a second renewals process: ${(one.seconds / two.seconds).toFixed(2)}×`);
} finally {
  rpc.close();
  await sys.close();
}

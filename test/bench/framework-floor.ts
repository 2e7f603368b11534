/**
 * `npm run bench:floor`: how much of B1's bare baseline is left once the
 * fixed design's HTTP layer (Koa 3 + @koa/router) sits in front of the bare
 * server's own query, bracketed bare → framed → bare like every figure
 * (run.ts). The framed server (framework-floor-server.ts) does nothing of the
 * service's (no RPC, no ORM, no rate limit, no metrics, a 7-column row), so
 * its ratio is a ceiling for B1 all-in-one on this machine, not a target.
 * Seeds and loads exactly as ../shared/bench/baseline-read.mjs does, with the
 * kit's own helpers (lib/common.mjs, lib/load.mjs). Needs DATABASE_URL.
 */
import { fork } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import { baselinesDir, benchPgUrl, runBaseline } from "./baselines.ts";

interface KitCommon {
  SUBSCRIPTION_DDL: string;
  benchUrl(): string;
  createBenchDb(): Promise<void>;
  dropBenchDb(): Promise<void>;
  seedSubscriptions(client: pg.Client, n: number, merchantIds: string[]): Promise<void>;
}
type LoadFigures = { req_per_s: number; p99_ms: number; non_2xx: number; errors: number };
interface KitLoad {
  load(url: string, method: string, setup: (req: object) => object): Promise<LoadFigures>;
}

const ROWS = Number(process.env.BENCH_SEED_ROWS ?? 100_000);
const env = { BENCH_PG_URL: benchPgUrl(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres") };
// The kit reads BENCH_PG_URL when its modules load.
process.env.BENCH_PG_URL = env.BENCH_PG_URL;
const kit = baselinesDir();
const common = (await import(pathToFileURL(path.join(kit, "lib/common.mjs")).href)) as KitCommon;
const { load } = (await import(pathToFileURL(path.join(kit, "lib/load.mjs")).href)) as KitLoad;

interface FramedServer {
  url: string;
  stop(): Promise<void>;
}

/** framework-floor-server.ts in its own process, as the kit's spawnServer runs the bare one (no node flags); resolves once it listens. */
function spawnFramedServer(databaseUrl: string): Promise<FramedServer> {
  const child = fork(fileURLToPath(new URL("./framework-floor-server.ts", import.meta.url)), [], {
    execArgv: [],
    env: { ...process.env, FLOOR_DATABASE_URL: databaseUrl },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`framed server exited with ${code}`)));
    child.once("message", (m) =>
      resolve({
        url: `http://127.0.0.1:${(m as { port: number }).port}`,
        stop: () =>
          new Promise((done) => {
            child.removeAllListeners("exit");
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
      }),
    );
  });
}

/** baseline-read.mjs with framework-floor-server.ts in place of the bare server. */
async function framedRead(): Promise<LoadFigures> {
  const merchants = Array.from({ length: 10 }, () => ({ id: randomUUID(), key: `sk_test_${randomBytes(24).toString("base64url")}` }));
  await common.createBenchDb();
  const db = new pg.Client({ connectionString: common.benchUrl() });
  let server: FramedServer | undefined;
  try {
    await db.connect();
    await db.query(common.SUBSCRIPTION_DDL);
    for (const m of merchants) {
      await db.query("INSERT INTO bench_api_key (key_hash, merchant_id) VALUES ($1, $2)", [createHash("sha256").update(m.key).digest("hex"), m.id]);
    }
    await common.seedSubscriptions(
      db,
      ROWS,
      merchants.map((m) => m.id),
    );
    const keyOf = new Map<string, string>(merchants.map((m) => [m.id, m.key]));
    const targets = (await db.query<{ id: string; merchant_id: string }>("SELECT id, merchant_id FROM bench_subscription")).rows.map((r) => ({
      path: `/api/v1/subscriptions/${r.id}`,
      key: keyOf.get(r.merchant_id)!,
    }));
    server = await spawnFramedServer(common.benchUrl());
    return await load(server.url, "GET", (req) => {
      const t = targets[Math.floor(Math.random() * targets.length)]!;
      return { ...req, path: t.path, headers: { "x-api-key": t.key } };
    });
  } finally {
    await server?.stop();
    await db.end();
    await common.dropBenchDb();
  }
}

const log = (s: string) => process.stderr.write(`[floor] ${s}\n`);
log("baseline read (1/2)");
const before = await runBaseline("read", env);
log("Koa 3 + @koa/router in front of the same query");
const framed = await framedRead();
log("baseline read (2/2)");
const after = await runBaseline("read", env);
const mean = (before.req_per_s! + after.req_per_s!) / 2;
const spread = Math.abs(before.req_per_s! - after.req_per_s!) / mean;
console.log(
  `bare node:http + pg   ${before.req_per_s} / ${after.req_per_s} req/s${spread > 0.1 ? " (noisy >10%)" : ""}, p99 ${before.p99_ms} / ${after.p99_ms} ms`,
);
console.log(`Koa + @koa/router     ${framed.req_per_s} req/s, p99 ${framed.p99_ms} ms (non2xx ${framed.non_2xx}, errors ${framed.errors})`);
console.log(`ratio                 ${(framed.req_per_s / mean).toFixed(3)}× (the most B1 all-in-one can reach here; its target is ≥ 0.6×)`);
if (framed.non_2xx || framed.errors) process.exitCode = 1;

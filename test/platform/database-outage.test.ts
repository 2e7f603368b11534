import { expect } from "chai";
import type pg from "pg";
import { createOrm, migrate, type Orm } from "../../services/platform/database/orm.ts";
import { entities } from "../../services/entities.ts";
import { startPostgresProcess, type PostgresProcess } from "../support/postgres-process.ts";
import { randomBytes } from "node:crypto";
import { loadConfig, SERVICE_NAMES, WORKER_GROUP_NAMES } from "../../services/platform/config.ts";
import { createLogger } from "../../services/platform/logger.ts";
import { startSystem } from "../../cli/system.ts";
import { infrastructure } from "../support/infrastructure.ts";
import { apiClient } from "../support/http.ts";
import { eventually } from "../support/eventually.ts";

/**
 * The database wedge: with a small pool and many transactions open when
 * PostgreSQL dies (`stop -m immediate`), no pool slot may be lost — once the
 * server is back, every slot serves queries again without a restart.
 * Runs on a private cluster; the shared server is never touched.
 */
describe("database outage: pool slots survive a crash mid-transaction", function () {
  this.timeout(120_000);
  const POOL = 5;
  let server: PostgresProcess | undefined;
  let orm: Orm | undefined;

  before(async () => {
    server = await startPostgresProcess();
    orm = await createOrm({ databaseUrl: server.url, poolMax: POOL, entities, statementTimeoutMs: 5_000, connectTimeoutMs: 2_000 });
    await migrate(orm);
  });
  after(async () => {
    await orm?.close(true).catch(() => {});
    await server?.destroy();
  });

  async function nativePool(): Promise<pg.Pool> {
    return (await orm!.em.getConnection().getNativeClient()) as unknown as pg.Pool;
  }

  /** Each state a connection can die in: idle in transaction, mid-statement, and about to commit. */
  function openTransactions(count: number, gate: Promise<void>): Promise<PromiseSettledResult<unknown>[]> {
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < count; i += 1) {
      const em = orm!.em.fork();
      all.push(
        em.transactional(async (tx) => {
          await tx.execute("select 1");
          if (i % 3 === 0)
            await tx.execute("select pg_sleep(30)"); // in flight at the stop
          else await gate; // idle in transaction at the stop; the next statement meets a dead socket
          await tx.execute("select 2");
        }),
      );
    }
    return Promise.allSettled(all);
  }

  for (let round = 1; round <= 3; round += 1) {
    it(`round ${round}: 4x the pool in open transactions across stop -m immediate, then every slot works again`, async () => {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const settled = openTransactions(POOL * 4, gate);
      // Wait until the pool is full of open transactions (the rest queue for a slot).
      const pool = await nativePool();
      await eventually(async () => pool.totalCount >= POOL && pool.idleCount === 0, 10_000, "transactions to fill the pool", 20);
      await server!.stopImmediate();
      open();
      const results = await settled;
      expect(results.filter((r) => r.status === "rejected").length, "transactions cut by the stop fail").to.be.greaterThan(0);
      expect(pool.totalCount, "no slot is held by a dead connection").to.equal(0);

      await server!.start();
      // More concurrent queries than slots: each slot must be usable again.
      const started = Date.now();
      const answers = await Promise.all(
        Array.from({ length: POOL * 3 }, (_, i) => orm!.em.fork().execute<{ n: number }[]>("select ?::int as n, pg_sleep(0.05)", [i])),
      );
      expect(answers.map((a) => Number(a[0]!.n))).to.have.length(POOL * 3);
      expect(Date.now() - started).to.be.lessThan(10_000);
      const tx = await orm!.em.fork().transactional((em) => em.execute<{ ok: number }[]>("select 1 as ok"));
      expect(Number(tx[0]!.ok)).to.equal(1);
    });
  }

  it("while the server is down, a query fails fast instead of waiting for a slot", async () => {
    await server!.stopImmediate();
    try {
      const started = Date.now();
      const results = await Promise.allSettled(Array.from({ length: POOL * 2 }, () => orm!.em.fork().execute("select 1")));
      expect(results.every((r) => r.status === "rejected")).to.equal(true);
      expect(Date.now() - started, "bounded by the connect timeout").to.be.lessThan(5_000);
    } finally {
      await server!.start();
    }
    const ok = await orm!.em.fork().execute<{ ok: number }[]>("select 1 as ok");
    expect(Number(ok[0]!.ok)).to.equal(1);
  });

  it("a whole system mid-outage: API calls answer 503 fast, /readyz 503, and close() (SIGTERM) ends cleanly", async () => {
    const config = loadConfig({
      DATABASE_URL: server!.url,
      REDIS_URL: (await infrastructure()).redisUrl,
      QUEUE_PREFIX: `outage${randomBytes(4).toString("hex")}`,
      ADMIN_API_KEY: "outage-admin-key",
      SANDBOX: "true",
      LOG_LEVEL: "silent",
      DB_POOL_MAX: "3",
      DB_CONNECT_TIMEOUT_MS: "1000",
      DB_STATEMENT_TIMEOUT_MS: "2000",
      RPC_TIMEOUT_MS: "4000",
      SWEEP_INTERVAL_MS: "200",
    });
    const system = await startSystem(config, createLogger("silent"), {
      services: SERVICE_NAMES,
      gateway: true,
      workerGroups: WORKER_GROUP_NAMES,
      gatewayPort: 0,
      servicesPort: 0,
    });
    let closed = false;
    try {
      const admin = apiClient(`http://127.0.0.1:${system.gatewayPort}`, { "x-admin-key": "outage-admin-key" });
      expect((await admin.post("/admin/v1/merchants", { name: "Before" })).status).to.equal(201);
      expect((await admin.get("/readyz")).status).to.equal(200);
      await server!.stopImmediate();
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 10 }, () => admin.post("/admin/v1/merchants", { name: "During" })));
      expect(
        answers.map((a) => a.status).every((s) => s === 503 || s === 504),
        JSON.stringify(answers.map((a) => a.status)),
      ).to.equal(true);
      expect(answers[0]!.body.error).to.match(/SERVICE_UNAVAILABLE|TIMEOUT/);
      expect(Date.now() - started).to.be.lessThan(5_000);
      const ready = await admin.get("/readyz");
      expect(ready.status).to.equal(503);
      const t = Date.now();
      await system.close();
      closed = true;
      expect(Date.now() - t, "shutdown mid-outage is bounded").to.be.lessThan(15_000);
    } finally {
      if (!closed) await system.close().catch(() => {});
      await server!.start();
    }
  });
});

import { expect } from "chai";
import pg from "pg";
import { pino } from "pino";
import { ManualClock } from "../../support/manual-clock.ts";
import { addMonths, partitionName } from "../../../services/platform/database/monthly-partitions.ts";
import { createLogger } from "../../../services/platform/logger.ts";
import { createMetrics } from "../../../services/platform/observability/metrics.ts";
import type { JobDeps } from "../../../services/platform/queue/define-job.ts";
import { retentionJobs } from "../../../services/retention/jobs.ts";
import { RETAINED_TABLES } from "../../../services/retention/retention-registry.ts";
import { ensureRetainedMonths } from "../../../services/retention/sweep-retention.ts";
import { eventually } from "../../support/eventually.ts";
import { useTestSystem } from "../../support/system.ts";
import { waitForLockWait } from "../../support/lock-waits.ts";

const attempts = RETAINED_TABLES.find((t) => t.table === "webhook_delivery_attempts")!;

/**
 * Found by the soak: a sandbox advance creating the next months answered 500.
 * Attaching a month locks the default partition, then the table its foreign key
 * names (webhook_endpoints); a webhook transaction that had updated an endpoint
 * and was about to write a row into the default partition closed the cycle,
 * and PostgreSQL chose the month's transaction as the victim. Lock contention
 * is the next run's business, as a lock timeout already was.
 */
describe("months created under lock contention", () => {
  const sys = useTestSystem();

  it("a month whose transaction is a deadlock's victim is tried again or left for the next run: nothing half made, the later months made, no error", async () => {
    const exists = async (name: string) => (await sys.sql<{ found: boolean }>("select to_regclass(?) is not null as found", [name]))[0]!.found;
    // A year that no other test touches; each try its own month (the months after it are made on the way).
    for (let attempt = 0; attempt < 3; attempt++) {
      const month = new Date(Date.UTC(2040 + attempt * 2, 0, 1));
      const holder = new pg.Client({ connectionString: sys.database.url });
      await holder.connect();
      try {
        // The holder never looks for the deadlock itself: the month's transaction, which waits first, finds it.
        await holder.query("set deadlock_timeout = '60s'");
        await holder.query("begin");
        await holder.query("lock table webhook_endpoints in row exclusive mode");
        const logger = createLogger("silent");
        const creating = ensureRetainedMonths({ em: sys.system.orm!.em.fork(), clock: new ManualClock(month) }, logger, month, [attempts]);
        const outcome = creating.then(
          () => "resolved",
          (err: Error) => err,
        );
        // The attach holds the default partition and waits for webhook_endpoints.
        await waitForLockWait(sys, "webhook_endpoints", "the attach to wait for webhook_endpoints");
        // The holder now writes where the default partition is: the cycle.
        const holderLock = await holder.query("lock table webhook_delivery_attempts_default in row exclusive mode").then(
          () => "granted",
          (err: { code?: string }) => err.code,
        );
        await holder.query("rollback").catch(() => {});
        const result = await outcome;
        expect(result, String(result)).to.equal("resolved");
        if (holderLock !== "granted") continue; // the holder was the victim (a slow machine): try the scenario again
        // Tried again at once (the victim rolled back whole): made then, or left whole for the next run, never half made.
        const victim = partitionName("webhook_delivery_attempts", month);
        if (await exists(victim)) {
          const [attached] = await sys.sql<{ n: number }>(
            "select count(*)::int as n from pg_inherits where inhrelid = to_regclass(?) and inhparent = 'webhook_delivery_attempts'::regclass",
            [victim],
          );
          expect(attached!.n, "the victim's month, if made, is attached").to.equal(1);
        }
        const next = new Date(Date.UTC(month.getUTCFullYear(), 1, 1));
        expect(await exists(partitionName("webhook_delivery_attempts", next)), "the month after").to.equal(true);
        return;
      } finally {
        await holder.end().catch(() => {});
      }
    }
    expect.fail("in three tries the month's transaction was never the deadlock's victim");
  });
});

/**
 * Contention that recurs must be visible: each step it leaves for the next run
 * is counted (billing_retention_contention_total{table}), and the month rows
 * are written to now, left missing, is an error rather than a warning.
 */
describe("months left to lock contention, as an operator sees them", () => {
  // No workers: no sweep of the system's own runs beside the one under test.
  const sys = useTestSystem({ workerGroups: [] });

  it("the current month left to a lock timeout is counted per table and logged at error level with its table and month", async () => {
    const exists = async (name: string) => (await sys.sql<{ found: boolean }>("select to_regclass(?) is not null as found", [name]))[0]!.found;
    // A year no other test touches: none of its months exist, so the sweep's first step is the current month's create.
    const month = new Date(Date.UTC(2050, 0, 1));
    const lines: { level: number; msg: string; table?: string; month?: string; partition?: string; code?: string }[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const metrics = createMetrics();
    const deps = { config: sys.config, logger, orm: sys.system.orm!, clock: new ManualClock(month), metrics } as unknown as JobDeps;
    const holder = new pg.Client({ connectionString: sys.database.url });
    await holder.connect();
    try {
      // The first table the sweep keeps, locked whole: the month's create waits for it and gives up at lock_timeout (55P03).
      expect(RETAINED_TABLES[0]).to.equal(attempts);
      await holder.query("begin");
      await holder.query(`lock table ${attempts.table} in access exclusive mode`);
      const outcome = retentionJobs[0]!.handle(deps).then(
        () => "resolved",
        (err: Error) => err,
      );
      await eventually(
        async () => lines.some((l) => l.level === 50),
        15_000,
        () => `the error line; lines so far: ${JSON.stringify(lines)}`,
      );
      // Released at once: the later months need not wait for it.
      await holder.query("rollback");
      const result = await outcome;
      expect(result, String(result)).to.equal("resolved");
    } finally {
      await holder.end().catch(() => {});
    }

    const current = partitionName(attempts.table, month);
    const errors = lines.filter((l) => l.level === 50);
    expect(errors[0]).to.include({ table: attempts.table, month: "2050-01", partition: current, code: "55P03" });
    // The next month too would be an error, had the release come too late for it (a loaded machine); none other.
    expect(errors.map((l) => l.month)).to.satisfy((months: string[]) => months.every((m) => m === "2050-01" || m === "2050-02"));
    expect(await exists(current), "the month left for the next run").to.equal(false);
    // Every step left is counted once, whatever its log level; the other tables met no contention.
    const left = lines.filter((l) => l.table === attempts.table && l.level >= 40);
    const counted = async (table: string) => (await metrics.retentionContention.get()).values.find((v) => v.labels.table === table)?.value;
    expect(await counted(attempts.table)).to.equal(left.length);
    for (const t of RETAINED_TABLES.slice(1)) {
      expect(await counted(t.table), t.table).to.equal(0);
      expect(await exists(partitionName(t.table, addMonths(month, 1))), `${t.table}: the month after`).to.equal(true);
    }
    expect(await metrics.scrape()).to.match(new RegExp(`billing_retention_contention_total\\{table="${attempts.table}"\\} [1-9]`));
  });

  it("a month further ahead left to a lock timeout is a warning, not an error, and listed as contended", async () => {
    const first = new Date(Date.UTC(2052, 0, 1));
    await ensureRetainedMonths({ em: sys.system.orm!.em.fork(), clock: new ManualClock(first) }, createLogger("silent"), first, [attempts]);
    // Two months on, the current and next months exist (a catalog lookup, no lock); the two after them wait for the lock and give up.
    const now = addMonths(first, 2);
    const left = [addMonths(now, 2), addMonths(now, 3)].map((m) => partitionName(attempts.table, m));
    const lines: { level: number; partition?: string; code?: string }[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const holder = new pg.Client({ connectionString: sys.database.url });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query(`lock table ${attempts.table} in access exclusive mode`);
      const [result] = await ensureRetainedMonths({ em: sys.system.orm!.em.fork(), clock: new ManualClock(now) }, logger, now, [attempts]);
      expect(result!.contended).to.deep.equal(left);
      expect(lines.map((l) => [l.level, l.partition, l.code])).to.deep.equal(left.map((p) => [40, p, "55P03"]));
    } finally {
      await holder.query("rollback").catch(() => {});
      await holder.end().catch(() => {});
    }
  });
});

import { expect } from "chai";
import pg from "pg";
import { ManualClock } from "../../support/manual-clock.ts";
import { partitionName } from "../../../services/platform/database/monthly-partitions.ts";
import { createLogger } from "../../../services/platform/logger.ts";
import { RETAINED_TABLES } from "../../../services/retention/retention-registry.ts";
import { ensureRetainedMonths } from "../../../services/retention/sweep-retention.ts";
import { eventually } from "../../support/eventually.ts";
import { useTestSystem } from "../../support/system.ts";

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
        await eventually(
          async () =>
            (
              await sys.sql<{ n: number }>(
                "select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation where c.relname = 'webhook_endpoints' and not l.granted",
              )
            )[0]!.n > 0,
          10_000,
          "the attach to wait for webhook_endpoints",
          10,
        );
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

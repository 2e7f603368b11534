import { expect } from "chai";
import pg from "pg";
import { ensureMonth, partitionName } from "../../../services/platform/database/monthly-partitions.ts";
import { RETAINED_TABLES } from "../../../services/retention/retention-registry.ts";
import { eventually } from "../../support/eventually.ts";
import { useTestSystem } from "../../support/system.ts";

const audit = RETAINED_TABLES.find((t) => t.table === "audit_entries")!;

/**
 * Found by CI: a sandbox advance of a year answered 500. Making the new time's
 * month moved that month's rows out of the default partition, and then a
 * worker, already on the new time, wrote one more row of it there before the
 * attach; the attach's scan of the default partition refused the month.
 */
describe("a month made while rows of it are still being written", () => {
  // No workers: nothing of the system's own writes into the year under test.
  const sys = useTestSystem({ workerGroups: [] });

  it("a row of the month committed into the default partition while the month is made is moved into it; the month is made", async () => {
    // A year no other test of this database touches.
    const month = new Date(Date.UTC(2060, 0, 1));
    const partition = partitionName(audit.table, month);
    const writer = new pg.Client({ connectionString: sys.database.url });
    await writer.connect();
    try {
      await writer.query("begin");
      await writer.query(
        `insert into audit_entries (at, actor_type, actor_id, actor_label, action, object_type)
         values ('2060-01-15T12:00:00Z', 'operator', 'race', 'race', 'test.race', 'test')`,
      );
      const making = ensureMonth(sys.system.orm!.em.fork(), audit, month).then(
        (made) => made,
        (err: Error) => err,
      );
      // The month's transaction waits for the writer's lock on the default partition (before the move, or at the attach).
      await eventually(
        async () =>
          (
            await sys.sql<{ n: number }>(
              "select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation where c.relname = 'audit_entries_default' and not l.granted",
            )
          )[0]!.n > 0,
        10_000,
        "the month's transaction to wait for the default partition",
        10,
      );
      await writer.query("commit");
      const made = await making;
      expect(made, String(made)).to.equal(true);
    } finally {
      await writer.query("rollback").catch(() => {});
      await writer.end().catch(() => {});
    }
    const [where] = await sys.sql<{ partition: string }>("select tableoid::regclass::text as partition from audit_entries where actor_id = 'race'");
    expect(where!.partition).to.equal(partition);
  });
});

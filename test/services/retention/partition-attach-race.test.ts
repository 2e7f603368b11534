import { expect } from "chai";
import pg from "pg";
import { partitionName } from "../../../services/platform/database/monthly-partitions.ts";
import { createLogger } from "../../../services/platform/logger.ts";
import { RETAINED_TABLES } from "../../../services/retention/retention-registry.ts";
import { ensureRetainedMonths } from "../../../services/retention/sweep-retention.ts";
import { ManualClock } from "../../support/manual-clock.ts";
import { advanceClock } from "../../../services/sandbox/advance-clock.ts";
import { useTestSystem } from "../../support/system.ts";
import { waitForLockWait } from "../../support/lock-waits.ts";

const audit = RETAINED_TABLES.find((t) => t.table === "audit_entries")!;

/**
 * Found by CI: a sandbox advance of a year answered 500. Making the new time's
 * month moved that month's rows out of the default partition, and then a
 * worker, already on the new time, committed one more row of it there while
 * the attach waited for the default partition; the attach's scan refused the
 * month (23514). The month is tried again at once, and that try moves the row.
 * (The advance now makes its months before the new time is committed, so its
 * own writers no longer race them: the second test.)
 */
describe("a month made while rows of it are still being written", () => {
  // No workers: nothing of the system's own writes into the year under test.
  const sys = useTestSystem({ workerGroups: [] });

  it("a row of the month committed into the default partition while the attach waits: the month is tried again, made, and the row moved into it", async () => {
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
      const making = ensureRetainedMonths({ em: sys.system.orm!.em.fork(), clock: new ManualClock(month) }, createLogger("silent"), month, [audit]).then(
        ([res]) => res!,
        (err: Error) => err,
      );
      // The attach waits for the writer's lock on the default partition (the move did not see the uncommitted row).
      await waitForLockWait(sys, "audit_entries_default", "the month's transaction to wait for the default partition");
      await writer.query("commit");
      const made = await making;
      if (made instanceof Error) throw made;
      expect(made.created).to.include(partition);
      expect(made.contended).to.deep.equal([]);
    } finally {
      await writer.query("rollback").catch(() => {});
      await writer.end().catch(() => {});
    }
    const [where] = await sys.sql<{ partition: string }>("select tableoid::regclass::text as partition from audit_entries where actor_id = 'race'");
    expect(where!.partition).to.equal(partition);
  });

  it("a sandbox advance runs what prepares the new time (the retained months) before the new time is committed", async () => {
    const offset = async () => Number((await sys.sql<{ offset_ms: string }>("select offset_ms from sandbox_clock where id = 1"))[0]!.offset_ms);
    const before = await offset();
    const seconds = 400 * 86_400;
    let seen: { offset: number; target: Date } | undefined;
    const res = await advanceClock(sys.context(), seconds, async (target) => {
      seen = { offset: await offset(), target };
    });
    expect(seen, "prepare ran").to.not.equal(undefined);
    expect(seen!.offset, "the offset while preparing").to.equal(before);
    expect(await offset()).to.equal(before + seconds * 1000);
    // The time prepared for is the time the advance moved to (to the clock's sync, a few ms apart).
    expect(Math.abs(seen!.target.getTime() - res.now.getTime())).to.be.below(5_000);
  });
});

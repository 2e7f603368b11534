import { eventually } from "./eventually.ts";
import type { TestSystem } from "./system.ts";

/**
 * Waits until some transaction waits for a lock on the table `relname` (a
 * lock request on it not yet granted, in pg_locks): how a test knows the
 * statement it started has reached the lock another connection holds.
 */
export async function waitForLockWait(sys: Pick<TestSystem, "sql">, relname: string, what: string): Promise<void> {
  await eventually(
    async () =>
      (
        await sys.sql<{ n: number }>("select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation where c.relname = ? and not l.granted", [
          relname,
        ])
      )[0]!.n > 0,
    10_000,
    what,
    10,
  );
}

import type { EntityManager } from "@mikro-orm/postgresql";
import type pg from "pg";
import { runPrepared, type PreparedStatement } from "./prepared.ts";

/**
 * For the rest of the caller's transaction, the planner reads rows only
 * through indexes: no sequential scan where an index serves, no bitmap scan
 * (`set_config(…, true)`: local to the transaction, so a pooled connection
 * gets its settings back at the commit, PgBouncer's transaction mode
 * included). Outside a transaction it holds for no later statement.
 *
 * For the workers whose statements find their rows by key or by a partial
 * index of the rows still to do: the events relay and the emails collector.
 * On tables whose statistics lag (a month's
 * new partition, a backlog written faster than autovacuum analyzes, a
 * restored database, a server run with autovacuum off) the planner judged
 * them tiny and scanned a whole month's partition for a handful of rows, per
 * batch: work per batch that grows with the month, so quadratic over a
 * backlog. And the entry of a row already done stays in a partial "to do"
 * index until vacuum: a bitmap scan visits the heap for every such entry on
 * every batch (up to autovacuum's threshold, 20 % of a month's rows), where a
 * plain index scan marks them killed as it passes, so later batches skip
 * them in the index.
 */
export async function readByIndexesOnly(em: EntityManager): Promise<void> {
  await em.execute("select set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)");
}

/**
 * Runs a named statement in a transaction of its own, planned to read through
 * indexes in their order: readByIndexesOnly's settings, and `enable_sort` off,
 * so the first rows by an index's order across a partitioned table's
 * partitions come from merging the partitions' index scans up to the LIMIT.
 * With the partitions' statistics lagging (as above) the planner judged each
 * partition tiny, appended them whole and sorted: the webhook claim read every
 * pending delivery of the endpoint to take ten (1,209 blocks for 10 of a 4,660
 * backlog; 37 merged). `jit` off as well: a sort the statement cannot do
 * without keeps the planner's "disabled" cost, which passes `jit_above_cost`
 * and would compile the statement on every run (measured: 1.7 s a run). Local
 * settings, as readByIndexesOnly's; a named statement keeps the plan made under
 * them for its connection, and only this function may run it (its name says
 * so: `….index-order`).
 */
export async function runPreparedInIndexOrder<R extends object>(pool: pg.Pool, statement: PreparedStatement, values: unknown[]): Promise<R[]> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A connection lost while checked out emits 'error' on the client, which crashes the process without a listener
  // (the ORM's pool has one; pool.query keeps one of its own): the call's own query fails and says so.
  const onError = (error: Error) => void (broken ??= error);
  client.on("error", onError);
  try {
    await client.query(
      "begin; select set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true), set_config('jit', 'off', true)",
    );
    const rows = await runPrepared<R>(client, statement, values);
    await client.query("commit");
    return rows;
  } catch (error) {
    // A connection that cannot even roll back goes, not back into the pool.
    await client.query("rollback").catch((e: Error) => (broken = e));
    throw error;
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}

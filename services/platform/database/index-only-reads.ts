import type { EntityManager } from "@mikro-orm/postgresql";

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

import type { EntityManager } from "@mikro-orm/postgresql";

/**
 * Native PostgreSQL range partitioning by calendar month (UTC), the one way
 * tables that grow with traffic are kept small: a month is created ahead of
 * time and dropped whole once it is past its retention (no DELETE, so no
 * vacuum). Naming is a convention the sweep relies on: `<table>_YYYY_MM` for
 * the month starting at that date, `<table>_default` for the catch-all.
 *
 * The default partition takes any row outside the months created (the sweep
 * down for months, a sandbox clock moved a year ahead), so an insert never
 * fails a business transaction for want of a month. Postgres refuses to create
 * a month while the default holds rows of it: `ensureMonth` moves them into
 * the new month in the same transaction.
 */
export interface MonthlyPartitionedTable {
  readonly table: string;
  /** The timestamptz column the table is partitioned by. */
  readonly column: string;
  /** Storage parameters of every partition (a partitioned table has none of its own), e.g. "fillfactor = 80". */
  readonly storage?: string;
}

/**
 * A condition that keeps rows (retention): on a row `r`; or, where asking it
 * row by row would scan a whole month, `month` as well: asked once for the
 * whole month, its `?`s the month's start and end (dropMonth), while `row`
 * still serves the default partition's strays (purgeDefault).
 */
export type NeededCondition = string | { readonly row: string; readonly month: string };

/** Bounds every partition operation: a sweep waits at most this long for a lock, then tries again next run. */
const LOCK_TIMEOUT = "2s";

export const monthStart = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
export const addMonths = (month: Date, n: number): Date => new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + n, 1));
export const partitionName = (table: string, month: Date): string => `${table}_${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, "0")}`;
export const defaultPartitionName = (table: string): string => `${table}_default`;

/** Table and column names come from code (the registry), never from input; this keeps them plain identifiers anyway. */
function ident(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a plain identifier: ${name}`);
  return `"${name}"`;
}

const lockKey = (table: string) => `billing-partitions:${table}`;

/** The months of `table` that exist, oldest first (from their names; other partitions are not ours to touch). */
export async function listMonths(em: EntityManager, table: string): Promise<Date[]> {
  const rows = await em.execute<{ name: string }[]>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = to_regclass(?)`,
    [table],
  );
  const pattern = new RegExp(`^${table}_(\\d{4})_(\\d{2})$`);
  return rows
    .map((r) => pattern.exec(r.name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1)))
    .sort((a, b) => a.getTime() - b.getTime());
}

/** Whether the month starting at `month` exists (a catalog lookup, no lock). */
export async function monthExists(em: EntityManager, table: string, month: Date): Promise<boolean> {
  const [row] = await em.execute<{ found: boolean }[]>("select to_regclass(?) is not null as found", [partitionName(table, month)]);
  return row?.found === true;
}

/**
 * Creates the month starting at `month` unless it exists; idempotent and safe
 * to run from two sweeps at once (one advisory lock per table). Rows of that
 * month waiting in the default partition are moved into it. Returns whether
 * it created the month.
 */
export async function ensureMonth(em: EntityManager, spec: MonthlyPartitionedTable, month: Date): Promise<boolean> {
  const name = partitionName(spec.table, month);
  const from = month.toISOString();
  const to = addMonths(month, 1).toISOString();
  const storage = spec.storage ? ` with (${spec.storage})` : "";
  // The common case (it exists) costs one catalog lookup, no transaction.
  if (await monthExists(em, spec.table, month)) return false;
  return em.transactional(async (tx) => {
    await tx.execute(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
    await tx.execute("select pg_advisory_xact_lock(hashtext(?))", [lockKey(spec.table)]);
    const parent = ident(spec.table);
    // A relation lock makes this backend read the catalog changes others committed (an advisory lock does not):
    // without it, the sweep that waited on the lock could still miss the month the other one just created.
    await tx.execute(`lock table ${parent} in share update exclusive mode`);
    const [exists] = await tx.execute<{ found: boolean }[]>("select to_regclass(?) is not null as found", [name]);
    if (exists?.found) return false;
    const column = ident(spec.column);
    const fallback = ident(defaultPartitionName(spec.table));
    const [hasDefault] = await tx.execute<{ found: boolean }[]>("select to_regclass(?) is not null as found", [defaultPartitionName(spec.table)]);
    // Built aside and attached, never `create table … partition of`: that takes ACCESS EXCLUSIVE on the parent and
    // would stop every insert of the table (a settle recording its event) while it waits; ATTACH needs only SHARE
    // UPDATE EXCLUSIVE on the parent (and scans the default partition, where rows of this month may wait: they
    // are moved into the new month first, since Postgres refuses a month the default partition holds rows of).
    await tx.execute(`create table ${ident(name)} (like ${parent} including defaults including constraints)${storage}`);
    if (hasDefault?.found) {
      await tx.execute(
        `with moved as (delete from ${fallback} where ${column} >= ? and ${column} < ? returning *) insert into ${ident(name)} select * from moved`,
        [from, to],
      );
    }
    await tx.execute(`alter table ${parent} attach partition ${ident(name)} for values from ('${from}') to ('${to}')`);
    return true;
  });
}

/**
 * Drops the month starting at `month` unless a row in it is still needed:
 * `neededRows` are conditions on its rows (as `r`), each asked on its own so
 * each can use its own (partial) index. Asked once without locks (a month
 * kept for weeks costs no exclusive lock on every run), then again under the
 * parent table's exclusive lock — taken parent first, the order every query
 * takes, and the lock DROP needs anyway — so nothing can become needed between
 * the check and the drop. Idempotent: a month already gone is "absent".
 */
export async function dropMonth(
  em: EntityManager,
  spec: MonthlyPartitionedTable,
  month: Date,
  neededRows: readonly NeededCondition[],
): Promise<"dropped" | "needed" | "absent"> {
  const name = partitionName(spec.table, month);
  const present = async (tx: EntityManager) =>
    (await tx.execute<{ found: boolean }[]>("select to_regclass(?) is not null as found", [name]))[0]?.found === true;
  const needed = async (tx: EntityManager) => {
    for (const condition of neededRows) {
      const [row] =
        typeof condition === "string"
          ? await tx.execute<{ found: boolean }[]>(`select exists (select 1 from ${ident(name)} r where ${condition}) as found`)
          : await tx.execute<{ found: boolean }[]>(`select exists (${condition.month}) as found`, [month.toISOString(), addMonths(month, 1).toISOString()]);
      if (row?.found) return true;
    }
    return false;
  };
  if (!(await present(em))) return "absent";
  if (await needed(em)) return "needed";
  return em.transactional(async (tx) => {
    await tx.execute(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
    await tx.execute("select pg_advisory_xact_lock(hashtext(?))", [lockKey(spec.table)]);
    if (!(await present(tx))) return "absent";
    await tx.execute(`lock table ${ident(spec.table)} in access exclusive mode`);
    if (await needed(tx)) return "needed";
    await tx.execute(`drop table ${ident(name)}`);
    return "dropped";
  });
}

/**
 * Rows in the default partition older than `before` and no longer needed are
 * deleted (a DELETE: the default partition only holds strays, so this is
 * small). Returns how many.
 */
export async function purgeDefault(em: EntityManager, spec: MonthlyPartitionedTable, before: Date, neededRows: readonly NeededCondition[]): Promise<number> {
  const fallback = defaultPartitionName(spec.table);
  const [exists] = await em.execute<{ found: boolean }[]>("select to_regclass(?) is not null as found", [fallback]);
  if (!exists?.found) return 0;
  // Under the table's advisory lock, like ensureMonth and dropMonth: an append-only table (audit_entries) lets
  // only partition maintenance holding that lock delete its strays.
  return em.transactional(async (tx) => {
    await tx.execute(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
    await tx.execute("select pg_advisory_xact_lock(hashtext(?))", [lockKey(spec.table)]);
    const rows = await tx.execute<{ n: number }[]>(
      `with gone as (delete from ${ident(fallback)} r where r.${ident(spec.column)} < ? and not (${neededRows.map((c) => `(${typeof c === "string" ? c : c.row})`).join(" or ") || "false"}) returning 1)
       select count(*)::int as n from gone`,
      [before.toISOString()],
    );
    return rows[0]?.n ?? 0;
  });
}

/** Estimated rows of the whole table (planner statistics: no scan), for the rows gauge. */
export async function estimatedRows(em: EntityManager, table: string): Promise<number> {
  const [row] = await em.execute<{ n: string | null }[]>(
    `select sum(greatest(c.reltuples, 0))::bigint as n from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = to_regclass(?)`,
    [table],
  );
  return Number(row?.n ?? 0);
}

/**
 * SQL for a migration that creates `table` partitioned by month on `column`:
 * the months from the current one to `monthsAhead` later (database time) and
 * the default partition. `columns` is the body of CREATE TABLE; its primary
 * key, if any, must include `column`. Register the table in
 * services/retention/retention-registry.ts and the sweep keeps it.
 */
export function monthlyPartitionedTableSql(spec: MonthlyPartitionedTable & { columns: string; monthsAhead?: number }): string {
  const table = ident(spec.table);
  const storage = spec.storage ? ` with (${spec.storage})` : "";
  return `
    create table ${table} (${spec.columns}) partition by range (${ident(spec.column)});
    do $$
    declare m timestamptz := date_trunc('month', now(), 'UTC');
    begin
      while m <= date_trunc('month', now(), 'UTC') + interval '${spec.monthsAhead ?? 3} months' loop
        execute format('create table %I partition of %I for values from (%L) to (%L)${storage}',
          '${spec.table}_' || to_char(m at time zone 'UTC', 'YYYY_MM'), '${spec.table}', m, (m at time zone 'UTC' + interval '1 month') at time zone 'UTC');
        m := (m at time zone 'UTC' + interval '1 month') at time zone 'UTC';
      end loop;
    end $$;
    create table ${ident(defaultPartitionName(spec.table))} partition of ${table} default${storage};
  `;
}

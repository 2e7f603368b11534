import type { Retention } from "../platform/config.ts";
import type { Logger } from "../platform/logger.ts";
import type { UseCaseContext } from "../platform/use-case.ts";
import {
  addMonths,
  defaultPartitionName,
  dropMonth,
  ensureMonth,
  estimatedRows,
  listMonths,
  monthExists,
  monthStart,
  partitionName,
  purgeDefault,
} from "../platform/database/monthly-partitions.ts";
import { systemClock } from "../platform/clock.ts";
import { RETAINED_TABLES, type RetainedTable } from "./retention-registry.ts";

/** Months created ahead of the current one (by the clock: the sandbox clock moves them too). */
export const MONTHS_AHEAD = 3;
/**
 * The current month and the next: rows are written to the one now and to the
 * other within weeks, so one still missing after lock contention is an error,
 * not a warning (see `errorIfStillMissing`).
 */
const MONTHS_WRITTEN_SOON = 2;
const DAY_MS = 86_400_000;

interface TableSweep {
  table: string;
  created: string[];
  dropped: string[];
  /** Months past retention kept because a row in them is still needed (or a lock was not granted in time). */
  kept: string[];
  /** Steps left for the next run because of lock contention: the month each was for, or the default partition (its purge). */
  contended: string[];
  /** Stray rows of the default partition past retention, deleted. */
  purged: number;
  /** Estimated rows after the sweep. */
  rows: number;
}

/**
 * For each retained table: (a) the current month and MONTHS_AHEAD more exist,
 * (b) every month whose end is older than the table's retention is dropped
 * unless a row in it is still needed, (c) strays in the default partition past
 * retention are deleted. Idempotent, and safe from two workers at once (every
 * step re-checks under a per-table advisory lock); a step that cannot get its
 * lock in time is left to the next run, and listed in `contended` so that the
 * job counts it (billing_retention_contention_total): a cycle that recurs shows.
 */
export async function sweepRetention(
  ctx: UseCaseContext,
  retention: Retention,
  logger: Logger,
  tables: readonly RetainedTable[] = RETAINED_TABLES,
): Promise<{ tables: TableSweep[] }> {
  const now = ctx.clock.now();
  const results: TableSweep[] = [];
  for (const spec of tables) {
    const { created, contended } = await monthsAhead(ctx, logger, spec, now);
    const res: TableSweep = { table: spec.table, created, dropped: [], kept: [], contended, purged: 0, rows: 0 };
    // Dropping follows the earlier of the service clock and the wall clock: a sandbox clock moved ahead (tests, the
    // soak, a merchant trying renewals) creates months ahead but never drops history that is young in real time.
    const dropNow = Math.min(now.getTime(), systemClock.now().getTime());
    const cutoff = new Date(dropNow - spec.retentionDays(retention) * DAY_MS);
    for (const month of await listMonths(ctx.em, spec.table)) {
      if (addMonths(month, 1) > cutoff) break;
      const name = partitionName(spec.table, month);
      const outcome = await step(() => dropMonth(ctx.em, spec, month, spec.neededRows), warnLeft(logger, spec.table, name, res.contended));
      if (outcome === "dropped") res.dropped.push(name);
      else if (outcome !== "absent") res.kept.push(name);
    }
    const purge = () => purgeDefault(ctx.em, spec, cutoff, spec.neededRows);
    res.purged = (await step(purge, warnLeft(logger, spec.table, defaultPartitionName(spec.table), res.contended))) ?? 0;
    res.rows = await estimatedRows(ctx.em, spec.table);
    if (res.created.length || res.dropped.length || res.purged || res.contended.length) {
      logger.info(
        { table: spec.table, created: res.created, dropped: res.dropped, kept: res.kept, contended: res.contended, purged: res.purged },
        "retention sweep",
      );
    }
    results.push(res);
  }
  return { tables: results };
}

/** The months one table was given ahead: those created, and those left for the next run because of lock contention. */
export interface MonthsAhead {
  table: string;
  created: string[];
  contended: string[];
}

/** (a) alone: the month of `now` and MONTHS_AHEAD more exist for `spec`. */
async function monthsAhead(ctx: UseCaseContext, logger: Logger, spec: RetainedTable, now: Date): Promise<MonthsAhead> {
  const res: MonthsAhead = { table: spec.table, created: [], contended: [] };
  for (let i = 0; i <= MONTHS_AHEAD; i++) {
    const month = addMonths(monthStart(now), i);
    const name = partitionName(spec.table, month);
    const left =
      i < MONTHS_WRITTEN_SOON ? errorIfStillMissing(ctx, logger, spec.table, month, res.contended) : warnLeft(logger, spec.table, name, res.contended);
    if (await step(() => ensureMonth(ctx.em, spec, month), left)) res.created.push(name);
  }
  return res;
}

/**
 * For a sandbox clock advance, before anything runs at the new time: every
 * retained table has the months of `now`, so what the advance's catch-up
 * writes (a renewal's events) lands in its month, not in the default
 * partition a later sweep would have to move it out of under locks. Returns
 * what it made and what lock contention left, per table, for the caller to count.
 */
export async function ensureRetainedMonths(
  ctx: UseCaseContext,
  logger: Logger,
  now: Date,
  tables: readonly RetainedTable[] = RETAINED_TABLES,
): Promise<MonthsAhead[]> {
  const results: MonthsAhead[] = [];
  for (const spec of tables) results.push(await monthsAhead(ctx, logger, spec, now));
  return results;
}

/**
 * Lock contention is no failure: a lock not granted in time (55P03), this
 * transaction chosen as a deadlock's victim (40P01), or an attach that met a
 * row its month's writers committed meanwhile (23514, below). Attaching a month locks
 * the default partition, then the tables its foreign keys name, while a
 * business transaction may hold one of those (a webhook worker updated its
 * endpoint) and then touch the default partition (a statement on the table
 * not pruned to one month locks every partition). The soak met it on a
 * sandbox advance, which answered 500. Nothing was half done (the month's
 * transaction rolled back, the other went on); the next run tries again.
 */
const LOCK_CONTENTION = new Set(["55P03", "40P01", "23514"]);

/**
 * Tried again at once, up to TRIES_AT_ONCE in all: a deadlock's victim (the other
 * transaction is usually done by then), and an attach that found a row of its
 * month in the default partition (23514): one committed after the move, while
 * the attach waited for the default partition's lock. It is committed now, so
 * the next try moves it. (Taking that lock before the move instead would fail
 * the writer: an insert routed to the default partition before the month
 * exists is checked against the default's new bounds once it gets the lock.)
 * Rows of a month in the making come from a sweep down for months or a
 * sandbox advance; the advance makes the new time's months before the new time
 * is committed (services/sandbox/advance-clock.ts), so nothing writes there yet.
 */
const RETRIED_AT_ONCE = new Set(["40P01", "23514"]);
const TRIES_AT_ONCE = 3;

/** Told of a step that lock contention left for the next run: its SQLSTATE and how many tries were made. */
type LeftForNextRun = (code: string, tries: number) => Promise<void>;

/** Runs one step; lock contention, once the deadlock tries are spent, goes to `left` and the step answers undefined. */
async function step<T>(run: () => Promise<T>, left: LeftForNextRun): Promise<T | undefined> {
  for (let tries = 1; ; tries++) {
    try {
      return await run();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (!code || !LOCK_CONTENTION.has(code)) throw err;
      if (RETRIED_AT_ONCE.has(code) && tries < TRIES_AT_ONCE) continue;
      await left(code, tries);
      return undefined;
    }
  }
}

/** A step whose delay costs nothing yet (a month further ahead, a month to drop, the default's strays): listed and warned of. */
function warnLeft(logger: Logger, table: string, partition: string, contended: string[]): LeftForNextRun {
  return async (code, tries) => {
    contended.push(partition);
    logger.warn({ table, partition, code, tries }, "retention sweep: lock contention (lock timeout or deadlock); the next run tries again");
  };
}

/**
 * The current or the next month left missing: until a run makes it, its rows
 * land in the default partition, and the attach that then moves them out
 * scans and locks that partition for longer the more there are. That is an
 * error for an operator to see, not a warning, unless another sweep made the
 * month meanwhile (it held the table's lock this one waited for).
 */
function errorIfStillMissing(ctx: UseCaseContext, logger: Logger, table: string, month: Date, contended: string[]): LeftForNextRun {
  const partition = partitionName(table, month);
  const warn = warnLeft(logger, table, partition, contended);
  return async (code, tries) => {
    if (await monthExists(ctx.em, table, month)) return warn(code, tries);
    contended.push(partition);
    logger.error(
      { table, month: month.toISOString().slice(0, 7), partition, code, tries },
      "retention sweep: the current or next month is still missing after lock contention; its rows go to the default partition until a run makes it",
    );
  };
}

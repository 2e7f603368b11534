import type { Retention } from "../platform/config.ts";
import type { Logger } from "../platform/logger.ts";
import type { UseCaseContext } from "../platform/use-case.ts";
import {
  addMonths,
  dropMonth,
  ensureMonth,
  estimatedRows,
  listMonths,
  monthStart,
  partitionName,
  purgeDefault,
} from "../platform/database/monthly-partitions.ts";
import { systemClock } from "../platform/clock.ts";
import { RETAINED_TABLES, type RetainedTable } from "./retention-registry.ts";

/** Months created ahead of the current one (by the clock: the sandbox clock moves them too). */
export const MONTHS_AHEAD = 3;
const DAY_MS = 86_400_000;

interface TableSweep {
  table: string;
  created: string[];
  dropped: string[];
  /** Months past retention kept because a row in them is still needed (or a lock was not granted in time). */
  kept: string[];
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
 * lock in time is left to the next run.
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
    const res: TableSweep = { table: spec.table, created: await monthsAhead(ctx, logger, spec, now), dropped: [], kept: [], purged: 0, rows: 0 };
    // Dropping follows the earlier of the service clock and the wall clock: a sandbox clock moved ahead (tests, the
    // soak, a merchant trying renewals) creates months ahead but never drops history that is young in real time.
    const dropNow = Math.min(now.getTime(), systemClock.now().getTime());
    const cutoff = new Date(dropNow - spec.retentionDays(retention) * DAY_MS);
    for (const month of await listMonths(ctx.em, spec.table)) {
      if (addMonths(month, 1) > cutoff) break;
      const outcome = await step(logger, spec.table, () => dropMonth(ctx.em, spec, month, spec.neededRows));
      if (outcome === "dropped") res.dropped.push(partitionName(spec.table, month));
      else if (outcome !== "absent") res.kept.push(partitionName(spec.table, month));
    }
    res.purged = (await step(logger, spec.table, () => purgeDefault(ctx.em, spec, cutoff, spec.neededRows))) ?? 0;
    res.rows = await estimatedRows(ctx.em, spec.table);
    if (res.created.length || res.dropped.length || res.purged) {
      logger.info({ table: spec.table, created: res.created, dropped: res.dropped, kept: res.kept, purged: res.purged }, "retention sweep");
    }
    results.push(res);
  }
  return { tables: results };
}

/** (a) alone: the month of `now` and MONTHS_AHEAD more exist for `spec`; returns the partitions it created. */
async function monthsAhead(ctx: UseCaseContext, logger: Logger, spec: RetainedTable, now: Date): Promise<string[]> {
  const created: string[] = [];
  for (let i = 0; i <= MONTHS_AHEAD; i++) {
    const month = addMonths(monthStart(now), i);
    if (await step(logger, spec.table, () => ensureMonth(ctx.em, spec, month))) created.push(partitionName(spec.table, month));
  }
  return created;
}

/**
 * For a sandbox clock advance, before anything runs at the new time: every
 * retained table has the months of `now`, so what the advance's catch-up
 * writes (a renewal's events) lands in its month, not in the default
 * partition a later sweep would have to move it out of under locks.
 */
export async function ensureRetainedMonths(ctx: UseCaseContext, logger: Logger, now: Date, tables: readonly RetainedTable[] = RETAINED_TABLES): Promise<void> {
  for (const spec of tables) await monthsAhead(ctx, logger, spec, now);
}

/**
 * Lock contention is no failure: a lock not granted in time (55P03), or this
 * transaction chosen as a deadlock's victim (40P01). Attaching a month locks
 * the default partition, then the tables its foreign keys name, while a
 * business transaction may hold one of those (a webhook worker updated its
 * endpoint) and then touch the default partition (a statement on the table
 * not pruned to one month locks every partition). The soak met it on a
 * sandbox advance, which answered 500. Nothing was half done (the month's
 * transaction rolled back, the other went on); the next run tries again.
 */
const LOCK_CONTENTION = new Set(["55P03", "40P01"]);

/** A deadlock's victim rolled back whole, so it is tried again at once (the other transaction is usually done by then). */
const DEADLOCK_TRIES = 3;

async function step<T>(logger: Logger, table: string, run: () => Promise<T>): Promise<T | undefined> {
  for (let tries = 1; ; tries++) {
    try {
      return await run();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (!code || !LOCK_CONTENTION.has(code)) throw err;
      if (code === "40P01" && tries < DEADLOCK_TRIES) continue;
      logger.warn({ table, code, tries }, "retention sweep: lock contention (lock timeout or deadlock); the next run tries again");
      return undefined;
    }
  }
}

import type { EntityManager } from "@mikro-orm/postgresql";
import type { WorkerGroup } from "../config.ts";
import type { DueWorkKind } from "./metrics.ts";

/**
 * How far behind one kind of scheduled work is. Each domain declares its own
 * (the query mirrors its sweep's "due" condition); the worker group that does
 * the work reports the lag, so an autoscaler scales that group on it.
 */
export interface DueWorkProbe {
  kind: DueWorkKind;
  group: WorkerGroup;
  /** When the oldest item due at `now` (service clock) and not yet done became due; null when none. */
  oldestDue(em: EntityManager, now: Date): Promise<Date | null>;
}

/** Seconds from `oldest` to `now`, never negative; 0 when nothing is due. */
export function lagSeconds(oldest: Date | string | null | undefined, now: Date): number {
  if (oldest == null) return 0;
  return Math.max(0, (now.getTime() - new Date(oldest).getTime()) / 1000);
}

/** Runs one `select <expr> as oldest` query and returns its value. */
export async function oldestOf(em: EntityManager, sql: string, params: unknown[]): Promise<Date | null> {
  const [row] = await em.execute<{ oldest: Date | string | null }[]>(sql, params as any[]);
  return row?.oldest == null ? null : new Date(row.oldest);
}

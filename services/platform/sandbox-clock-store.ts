import type { EntityManager } from "@mikro-orm/postgresql";

/**
 * The sandbox clock's one row (id 1): the offset every process of a sandbox
 * deployment adds to the wall clock. The platform reads it (clock-factory.ts),
 * the sandbox domain moves it (sandbox/advance-clock.ts).
 */

/** The shared offset in milliseconds (0 before the first advance). */
export async function readSandboxClockOffsetMs(em: EntityManager): Promise<number> {
  const rows = await em.getConnection().execute<{ offset_ms: string }[]>("select offset_ms from sandbox_clock where id = 1");
  return Number(rows[0]?.offset_ms ?? 0);
}

/** Moves the shared offset forward by `ms` in one statement (two advances at once both count) and returns the new offset. */
export async function advanceSandboxClockOffsetMs(em: EntityManager, ms: number): Promise<number> {
  const rows = await em
    .getConnection()
    .execute<{ offset_ms: string }[]>("update sandbox_clock set offset_ms = offset_ms + ? where id = 1 returning offset_ms", [ms]);
  return Number(rows[0]!.offset_ms);
}

import type { Queues } from "../platform/queue/queues.ts";
import type { SweepKind } from "../platform/queue/job-kind.ts";

/**
 * After a sandbox clock advance, runs every periodic sweep once now instead of
 * at its next interval (SWEEP_INTERVAL_MS, 5 s by default): what became due
 * (expiries, renewals, scheduled changes, retries) happens within about a
 * second, even when a test advances month by month. The sweeps sync the
 * clock first and are idempotent, so an extra run changes nothing else; if
 * Redis is down the regular sweeps still come. The run id is the new offset,
 * so a burst of identical requests adds one run each. The sweeps are passed
 * in by the composition root (services/routes.ts): the sandbox knows no job.
 */
export async function runDueSweeps(queues: Queues, sweeps: readonly SweepKind[], offsetMs: number): Promise<void> {
  await Promise.all(sweeps.map((sweep) => queues.runSweepNow(sweep, String(offsetMs))));
}

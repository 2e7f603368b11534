import type { Queues } from "../platform/queue/queues.ts";
import { jobId } from "../platform/queue/define-job.ts";
import { ALL_JOBS } from "../../workers/registry.ts";

/**
 * After a sandbox clock advance, runs every periodic sweep once now instead of
 * at its next interval (SWEEP_INTERVAL_MS, 5 s by default): what became due
 * (expiries, renewals, scheduled changes, retries) happens within about a
 * second, even when a test advances month by month. The sweeps sync the
 * clock first and are idempotent, so an extra run changes nothing else; if
 * Redis is down the regular sweeps still come. The job id is per advance
 * (the new offset), so a burst of identical requests adds one run each.
 */
export async function runDueSweeps(queues: Queues, offsetMs: number): Promise<void> {
  const sweeps = ALL_JOBS.filter((job) => job.every !== undefined);
  await Promise.all(
    sweeps.map((job) => queues.add(job, {}, { jobId: jobId("sandbox-advance", job.name, String(offsetMs)), removeOnComplete: true, removeOnFail: true })),
  );
}

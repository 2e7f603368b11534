import { setTimeout as sleep } from "node:timers/promises";
import type { WorkerGroup } from "../../services/platform/config.ts";
import { createLogger } from "../../services/platform/logger.ts";
import type { JobDeps } from "../../services/platform/queue/define-job.ts";
import type { SweepKind } from "../../services/platform/queue/job-kind.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";
import { ALL_SWEEPS } from "../../services/job-kinds.ts";
import { handlersOf, type TestSystem } from "./system.ts";

/**
 * Deterministic waiting for tests that show something did NOT happen: instead
 * of sleeping "long enough for a few sweeps", run the sweeps now and wait until
 * every job they (or anything else) queued has run. Whatever the system would
 * do on its own has then been done, so the assertion that follows can fail.
 */

/** Every recurring sweep, or those of the given worker groups. */
export function sweepsOf(groups?: readonly WorkerGroup[]): SweepKind[] {
  return ALL_SWEEPS.filter((sweep) => !groups || groups.includes(sweep.group));
}

/**
 * Runs each sweep's handler once, in this process, the way a worker runs it
 * (each syncs the service clock first). Any jobs they queue go to the real
 * queues, for the running workers.
 */
export async function runSweeps(sys: TestSystem, sweeps: readonly SweepKind[]): Promise<void> {
  const rpc = new RpcClients(sys.config.internalApiToken);
  const deps: JobDeps = {
    config: sys.config,
    logger: createLogger(sys.config.logLevel),
    orm: sys.system.orm!,
    clock: sys.system.clock!.clock,
    queues: sys.system.queues!,
    rpc,
  };
  try {
    for (const handler of handlersOf(...sweeps)) await (handler.handle as (deps: JobDeps) => Promise<void>)(deps);
  } finally {
    rpc.close();
  }
}

/**
 * Waits until no job is waiting or running in the queues of `groups` (by
 * default the groups the test system runs workers for), their sweeps queues
 * included (a sweep run asked after a clock move queues the work it finds). Delayed jobs, due
 * later, are not waited for. The counts of each queue are read atomically;
 * two idle readings of every group in a row are required, so a job that
 * queues work into another group just before it finishes is still seen.
 */
export async function drainQueues(sys: TestSystem, groups: readonly WorkerGroup[] = sys.workerGroups, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let idleReadings = 0;
  for (;;) {
    let busy = 0;
    const seen: string[] = [];
    for (const queue of groups.flatMap((group) => [sys.system.queues!.queue(group), sys.system.queues!.sweepQueue(group)])) {
      const counts = await queue.getJobCounts("waiting", "active", "prioritized", "waiting-children");
      const n = Object.values(counts).reduce((a, b) => a + b, 0);
      busy += n;
      if (n > 0) seen.push(`${queue.name}: ${JSON.stringify(counts)}`);
    }
    idleReadings = busy === 0 ? idleReadings + 1 : 0;
    if (idleReadings >= 2) return;
    if (Date.now() > deadline) throw new Error(`queues still busy after ${timeoutMs} ms (${seen.join("; ")})`);
    await sleep(busy === 0 ? 10 : 25);
  }
}

/**
 * Runs the sweeps of `groups` (default: the groups the system runs) once now,
 * then drains those groups' queues: everything due on the service clock has
 * been carried out when it returns.
 */
export async function settle(sys: TestSystem, options: { groups?: readonly WorkerGroup[]; sweeps?: readonly SweepKind[] } = {}): Promise<void> {
  const groups = options.groups ?? sys.workerGroups;
  await runSweeps(sys, options.sweeps ?? sweepsOf(groups));
  await drainQueues(sys, groups);
}

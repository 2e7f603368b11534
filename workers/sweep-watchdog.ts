import type { WorkerGroup } from "../services/platform/config.ts";
import type { JobDefinition, JobDeps } from "../services/platform/queue/define-job.ts";
import { jobId } from "../services/platform/queue/define-job.ts";

export interface SweepWatchdog {
  /** One pass: re-declares every missing scheduler and runs its sweep now. Returns the names restored. */
  check(): Promise<string[]>;
  stop(): void;
}

/**
 * What keeps the Postgres sweeps running when Redis loses its data without a
 * reconnect (FLUSHALL, a failover to an empty replica): BullMQ job schedulers
 * live only in Redis, so a per-process timer looks for each of this process's
 * schedulers every sweep interval and, when one is missing, declares it again
 * and enqueues one run of the sweep at once (job id per interval, so several
 * workers processes add it once). Due work is late by at most about one
 * interval after the loss. Redis being down is not reported here: the queue
 * connection's own reconnect re-declares, and a failed pass is retried next tick.
 */
export function startSweepWatchdog(deps: JobDeps, groups: readonly WorkerGroup[], jobs: Iterable<JobDefinition<any>>): SweepWatchdog {
  const sweeps = [...jobs].filter((j) => j.every !== undefined && groups.includes(j.group));
  const everyOf = (def: JobDefinition<any>) => (typeof def.every === "function" ? def.every(deps.config) : def.every!);
  let running = false;

  async function check(): Promise<string[]> {
    if (running) return [];
    running = true;
    const restored: string[] = [];
    try {
      for (const def of sweeps) {
        const queue = deps.queues.queue(def.group);
        if (await queue.getJobScheduler(def.name)) continue;
        const every = everyOf(def);
        await queue.upsertJobScheduler(def.name, { every }, { name: def.name, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } });
        const bucket = Math.floor(Date.now() / every);
        await queue.add(def.name, {}, { jobId: jobId(def.name, "restored", `b${bucket}`), removeOnComplete: 100, removeOnFail: 100 });
        restored.push(def.name);
      }
      if (restored.length) deps.logger.warn({ sweeps: restored }, "sweep schedulers were missing from Redis (data lost); declared again and run now");
    } catch {
      // Redis unreachable: nothing to restore now; the next tick (or the reconnect) does.
    } finally {
      running = false;
    }
    return restored;
  }

  const interval = Math.max(100, Math.min(deps.config.sweepIntervalMs, ...sweeps.map(everyOf)));
  const timer = sweeps.length ? setInterval(() => void check(), interval) : undefined;
  timer?.unref();
  return { check, stop: () => clearInterval(timer) };
}

import type { WorkerGroup } from "../services/platform/config.ts";
import { isSweep, type AnyHandler, type JobDeps, type SweepHandler } from "../services/platform/queue/define-job.ts";
import { observeJob } from "../services/platform/observability/job-metrics.ts";
import { declareSweep } from "./declare-sweep.ts";

export interface SweepWatchdog {
  /** One pass; returns the sweeps it found missing or stuck in Redis (and so ran here). */
  check(): Promise<string[]>;
  /** Stops the timer and waits for a sweep it is running (shutdown: before the pools close). */
  stop(): Promise<void>;
}

/**
 * What keeps the Postgres sweeps running whatever happens to Redis. BullMQ
 * job schedulers live only in Redis: FLUSHALL or a restart without
 * persistence deletes them without a reconnect, and a workers process killed
 * while holding a sweep's job leaves it "active" until a stall check that
 * only a process living 30 s runs. So a per-process timer looks at each of
 * this process's sweeps every sweep interval:
 *  - scheduler missing → declared again, and the sweep runs here at once;
 *  - its next run overdue by more than one interval (stuck) or Redis not
 *    answering → the sweep runs here, in this process, directly.
 * Sweeps are safe to run concurrently (claims, leases, `skip locked`), so
 * running one here besides the queue never does work twice. Due work is thus
 * late by at most about two intervals after any Redis fault.
 */
export function startSweepWatchdog(deps: JobDeps, groups: readonly WorkerGroup[], handlers: Iterable<AnyHandler>): SweepWatchdog {
  const sweeps = [...handlers].filter((h): h is SweepHandler => isSweep(h.kind) && groups.includes(h.kind.group));
  const everyOf = (def: SweepHandler) => def.kind.every(deps.config);
  const running = new Map<string, Promise<void>>();
  let stopped = false;

  async function health(def: SweepHandler): Promise<"ok" | "missing" | "stuck" | "unreachable"> {
    try {
      const queue = deps.queues.sweepQueue(def.kind.group);
      const scheduler = await queue.getJobScheduler(def.kind.name);
      if (!scheduler) {
        await declareSweep(queue, def.kind, deps.config);
        return "missing";
      }
      return scheduler.next !== undefined && scheduler.next < Date.now() - everyOf(def) ? "stuck" : "ok";
    } catch {
      return "unreachable";
    }
  }

  /** Runs one sweep in this process (never two runs of the same sweep here at once). */
  async function runHere(def: SweepHandler): Promise<void> {
    if (running.has(def.kind.name) || stopped) return;
    // Counted like the queue's runs of the same sweep (billing_job_duration_seconds{job_name=<sweep>}).
    const run = observeJob(deps.metrics, def.kind.name, () => def.handle(deps))
      .catch((err: Error) => deps.logger.warn({ err: err.message, sweep: def.kind.name }, "sweep run by the watchdog failed; the next interval retries"))
      .finally(() => running.delete(def.kind.name));
    running.set(def.kind.name, run);
    await run;
  }

  let lastReported = "";
  async function check(): Promise<string[]> {
    const states = await Promise.all(sweeps.map(async (def) => [def, await health(def)] as const));
    const unhealthy = states.filter(([, s]) => s !== "ok");
    const report = unhealthy.map(([d, s]) => `${d.kind.name}:${s}`).join(",");
    if (report !== lastReported) {
      // Logged when the picture changes, not every interval.
      if (report) deps.logger.warn({ sweeps: report }, "sweep schedulers missing or stuck in Redis: running the sweeps in this process");
      else if (lastReported) deps.logger.warn("sweep schedulers healthy again");
      lastReported = report;
    }
    await Promise.all(unhealthy.map(([def]) => runHere(def)));
    return unhealthy.map(([def]) => def.kind.name);
  }

  const interval = Math.max(100, Math.min(deps.config.sweepIntervalMs, ...sweeps.map(everyOf)));
  let ticking = false;
  const timer = sweeps.length
    ? setInterval(() => {
        if (ticking) return;
        ticking = true;
        void check().finally(() => (ticking = false));
      }, interval)
    : undefined;
  timer?.unref();
  return {
    check,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await Promise.all(running.values());
    },
  };
}

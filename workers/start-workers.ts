import { Worker } from "bullmq";
import { connectRedis, type RedisConnection } from "../services/platform/redis.ts";
import type { WorkerGroup } from "../services/platform/config.ts";
import { isSweep, type AnyHandler, type JobDeps } from "../services/platform/queue/define-job.ts";
import { buildJobRegistry } from "./registry.ts";
import { declareSweep } from "./declare-sweep.ts";
import { startSweepWatchdog, type SweepWatchdog } from "./sweep-watchdog.ts";
import { logJobFailures } from "./job-failure-log.ts";
import { OutageLog } from "../services/platform/outage-log.ts";
import { observeJob } from "../services/platform/observability/job-metrics.ts";
import { startRelayPoke } from "../services/events/relay-poke.ts";
import { deliverWebhooksKind } from "../services/events/webhook-queue.ts";

export interface RunningWorkers {
  watchdog: SweepWatchdog;
  close(): Promise<void>;
}

/**
 * Two BullMQ workers per group, each on its own blocking connection: one on
 * the group's queue (its jobs), one on its sweeps queue (`<group>-sweeps`),
 * so an operator sees deliveries apart from the relay's run every 0.5 s. The
 * processor only dispatches by job name; handlers are thin calls into use
 * cases. Recurring sweeps are (re)declared with upsertJobScheduler, which is
 * idempotent across processes.
 */
export async function startWorkers(
  deps: JobDeps,
  groups: readonly WorkerGroup[],
  registry: Map<string, AnyHandler> = buildJobRegistry(),
): Promise<RunningWorkers> {
  const workers: Worker[] = [];
  const connections: RedisConnection[] = [];
  const listeners: (() => void)[] = [];
  for (const group of groups) {
    const groupJobs = [...registry.values()].filter((j) => j.kind.group === group);
    const redisOutage = new OutageLog(deps.logger, `redis (worker group ${group})`);
    /**
     * One BullMQ worker on one of the group's queues, on its own blocking connection. It runs any
     * handler of the group: a sweep job left in the group's queue by an earlier version (whose
     * schedulers lived there) is run, not failed.
     */
    const startWorker = (queueName: string, concurrency: number) => {
      const connection = connectRedis(deps.config, { maxRetriesPerRequest: null });
      connection.on("error", (err) => redisOutage.failed(err.message));
      connection.on("ready", () => redisOutage.succeeded());
      connections.push(connection);
      const worker = new Worker(
        queueName,
        async (job) => {
          const def = registry.get(job.name);
          await observeJob(deps.metrics, def ? job.name : "unknown", async () => {
            if (!def || def.kind.group !== group) throw new Error(`no handler for job ${job.name} in group ${group}`);
            await def.handle(deps, job.data);
          });
        },
        {
          connection,
          prefix: deps.config.queuePrefix,
          concurrency,
          autorun: true,
          // A job held by a process killed with -9 goes back to the queue within ~15 s, not ~60 s.
          lockDuration: 10_000,
          stalledInterval: 5_000,
          ...(deps.queues.telemetry && { telemetry: deps.queues.telemetry }),
        },
      );
      // Errors while Redis is away are the outage already logged once above.
      worker.on("error", (err) => (redisOutage.down ? redisOutage.failed(err.message) : deps.logger.error({ err, group, queue: queueName }, "worker error")));
      logJobFailures(worker, deps.logger);
      workers.push(worker);
    };
    const workQueue = deps.queues.queue(group);
    const sweepQueue = deps.queues.sweepQueue(group);
    startWorker(workQueue.name, group === "webhooks" ? deps.config.webhookConcurrency : deps.config.workerConcurrency);
    // Sweeps on their own queue (sweepQueueName), each able to run beside the others as before.
    const sweeps = groupJobs.map((j) => j.kind).filter(isSweep);
    if (sweeps.length > 0) startWorker(sweepQueue.name, sweeps.length);
    const declareSweeps = async () => {
      for (const kind of sweeps) {
        await declareSweep(sweepQueue, kind, deps.config);
        // Where an earlier version declared it: its runs would go on landing among the group's jobs.
        await workQueue.removeJobScheduler(kind.name);
      }
    };
    await declareSweeps();
    // A Redis that restarts empty (no persistence) forgets the schedulers: declare them again on every reconnect.
    const redeclare = () => void declareSweeps().catch((err) => deps.logger.warn({ err: err.message, group }, "could not declare sweeps"));
    deps.queues.connection.on("ready", redeclare);
    listeners.push(redeclare);
    deps.logger.info({ group, jobs: groupJobs.map((j) => j.kind.name) }, "worker group started");
  }
  // Redis can lose the schedulers without a reconnect (FLUSHALL): a per-process timer restores them.
  const watchdog = startSweepWatchdog(deps, groups, registry.values());
  // Committed events reach the relay at once (a Redis poke after commit); its sweep stays the safety net.
  const relayPoke = groups.includes("webhooks") && registry.has(deliverWebhooksKind.name) ? startRelayPoke(deps) : undefined;
  return {
    watchdog,
    async close() {
      await watchdog.stop();
      await relayPoke?.close();
      for (const l of listeners) deps.queues.connection.off("ready", l);
      await Promise.all(workers.map((w) => w.close()));
      for (const c of connections) c.disconnect();
    },
  };
}

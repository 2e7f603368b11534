import { Worker } from "bullmq";
import { connectRedis, type RedisConnection } from "../services/platform/redis.ts";
import type { WorkerGroup } from "../services/platform/config.ts";
import type { JobDeps } from "../services/platform/queue/define-job.ts";
import { jobsByName, ALL_JOBS } from "./registry.ts";
import { observeJob } from "../services/platform/observability/job-metrics.ts";
import type { JobDefinition } from "../services/platform/queue/define-job.ts";

export interface RunningWorkers {
  close(): Promise<void>;
}

/**
 * One BullMQ worker per group, each on its own blocking connection. The
 * processor only dispatches by job name; handlers are thin calls into use
 * cases. Recurring sweeps are (re)declared with upsertJobScheduler, which is
 * idempotent across processes.
 */
export async function startWorkers(
  deps: JobDeps,
  groups: readonly WorkerGroup[],
  jobs: JobDefinition<any>[] = ALL_JOBS,
): Promise<RunningWorkers> {
  const registry = jobsByName(jobs);
  const workers: Worker[] = [];
  const connections: RedisConnection[] = [];
  const listeners: (() => void)[] = [];
  for (const group of groups) {
    const groupJobs = [...registry.values()].filter((j) => j.group === group);
    const connection = connectRedis(deps.config, { maxRetriesPerRequest: null });
    connection.on("error", (err) => deps.logger.warn({ err: err.message, group }, "worker redis connection error"));
    connections.push(connection);
    const worker = new Worker(
      group,
      async (job) => {
        const def = registry.get(job.name);
        await observeJob(deps.metrics, def ? job.name : "unknown", async () => {
          if (!def || def.group !== group) throw new Error(`no handler for job ${job.name} in group ${group}`);
          await def.handle(deps, job.data);
        });
      },
      { connection, prefix: deps.config.queuePrefix, concurrency: group === "webhooks" ? deps.config.webhookConcurrency : deps.config.workerConcurrency, autorun: true, ...(deps.queues.telemetry && { telemetry: deps.queues.telemetry }) },
    );
    worker.on("error", (err) => deps.logger.error({ err, group }, "worker error"));
    worker.on("failed", (job, err) => deps.logger.warn({ err: err.message, job: job?.name, id: job?.id }, "job failed"));
    workers.push(worker);

    const queue = deps.queues.queue(group);
    const declareSweeps = async () => {
      for (const def of groupJobs) {
        if (def.every === undefined) continue;
        const every = typeof def.every === "function" ? def.every(deps.config) : def.every;
        await queue.upsertJobScheduler(def.name, { every }, { name: def.name, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } });
      }
    };
    await declareSweeps();
    // A Redis that restarts empty (no persistence) forgets the schedulers: declare them again on every reconnect.
    const redeclare = () => void declareSweeps().catch((err) => deps.logger.warn({ err: err.message, group }, "could not declare sweeps"));
    deps.queues.connection.on("ready", redeclare);
    listeners.push(redeclare);
    deps.logger.info({ group, jobs: groupJobs.map((j) => j.name) }, "worker group started");
  }
  return {
    async close() {
      for (const l of listeners) deps.queues.connection.off("ready", l);
      await Promise.all(workers.map((w) => w.close()));
      for (const c of connections) c.disconnect();
    },
  };
}

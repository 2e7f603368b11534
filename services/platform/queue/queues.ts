import { Queue, type JobsOptions, type Telemetry } from "bullmq";
import { connectRedis, type RedisConnection, type RedisTarget } from "../redis.ts";
import type { WorkerGroup } from "../config.ts";
import { WORKER_GROUP_NAMES } from "../config.ts";
import type { Logger } from "../logger.ts";
import type { JobDefinition } from "./define-job.ts";

/**
 * Producers: one BullMQ queue per worker group. The connection fails fast
 * (no offline queue, one retry) because producers run in request paths and
 * right after commits: if Redis is down the enqueue is skipped and logged, and
 * the Postgres sweeps pick the work up later. Nothing is lost, only delayed.
 */
export class Queues {
  readonly connection: RedisConnection;
  readonly prefix: string;
  /** BullMQ telemetry (bullmq-otel) when tracing is on: a job's span continues the trace that enqueued it. */
  readonly telemetry: Telemetry | undefined;
  readonly #queues = new Map<WorkerGroup, Queue>();
  readonly #logger: Logger;

  constructor(redis: string | RedisTarget, prefix: string, logger: Logger, telemetry?: Telemetry) {
    const target = typeof redis === "string" ? { redisUrl: redis, redisClusterNodes: [] } : redis;
    this.connection = connectRedis(target, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
    this.telemetry = telemetry;
    this.connection.on("error", () => {}); // reported by the enqueue that fails
    this.prefix = prefix;
    this.#logger = logger;
  }

  queue(group: WorkerGroup): Queue {
    let q = this.#queues.get(group);
    if (!q) {
      q = new Queue(group, { connection: this.connection, prefix: this.prefix, ...(this.telemetry && { telemetry: this.telemetry }) });
      q.on("error", () => {});
      this.#queues.set(group, q);
    }
    return q;
  }

  /** Enqueues; returns false (and logs) when Redis is unreachable. Never throws. */
  async add<P>(job: JobDefinition<P>, payload: P, options: JobsOptions = {}): Promise<boolean> {
    try {
      await this.queue(job.group).add(job.name, payload, { removeOnComplete: 1000, removeOnFail: 5000, ...options });
      return true;
    } catch (err) {
      this.#logger.warn({ err, job: job.name }, "enqueue failed; the sweep will pick it up");
      return false;
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.close().catch(() => {})));
    this.connection.disconnect();
  }

  static groups(): readonly WorkerGroup[] {
    return WORKER_GROUP_NAMES;
  }
}

import { Queue, type Telemetry } from "bullmq";
import { connectRedis, type RedisConnection, type RedisTarget } from "../redis.ts";
import type { WorkerGroup } from "../config.ts";
import type { Logger } from "../logger.ts";
import { jobId, sweepQueueName, type JobKind, type SweepKind } from "./job-kind.ts";

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
  readonly #queues = new Map<string, Queue>();
  readonly #logger: Logger;

  constructor(redis: string | RedisTarget, prefix: string, logger: Logger, telemetry?: Telemetry) {
    const target = typeof redis === "string" ? { redisUrl: redis, redisClusterNodes: [] } : redis;
    this.connection = connectRedis(target, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
    this.telemetry = telemetry;
    this.connection.on("error", () => {}); // reported by the enqueue that fails
    this.prefix = prefix;
    this.#logger = logger;
  }

  /** The group's jobs (what its workers do: deliveries, renewals, ...). */
  queue(group: WorkerGroup): Queue {
    return this.#named(group);
  }

  /** The group's recurring sweeps (job schedulers and run-now asks), kept apart from its jobs (sweepQueueName). */
  sweepQueue(group: WorkerGroup): Queue {
    return this.#named(sweepQueueName(group));
  }

  #named(name: string): Queue {
    let q = this.#queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.connection, prefix: this.prefix, ...(this.telemetry && { telemetry: this.telemetry }) });
      q.on("error", () => {});
      this.#queues.set(name, q);
    }
    return q;
  }

  /**
   * Enqueues one job of a kind, its id built by the kind. Returns false (and
   * logs) when Redis is unreachable; never throws.
   */
  async add<P>(kind: JobKind<P>, payload: P, options: { delay?: number } = {}): Promise<boolean> {
    return this.#attempt(kind.name, () => this.queue(kind.group).add(kind.name, payload, this.#options(kind, payload, options.delay)));
  }

  /** Enqueues many jobs of one kind in one round trip (a sweep's batch). */
  async addBulk<P>(kind: JobKind<P>, payloads: readonly P[]): Promise<boolean> {
    if (payloads.length === 0) return true;
    const jobs = payloads.map((data) => ({ name: kind.name, data, opts: this.#options(kind, data) }));
    return this.#attempt(kind.name, () => this.queue(kind.group).addBulk(jobs));
  }

  /** Runs a sweep once now (besides its schedule); `runId` de-duplicates a burst of identical asks. */
  async runSweepNow(sweep: SweepKind, runId: string): Promise<boolean> {
    const opts = { jobId: jobId("sweep-now", sweep.name, runId), removeOnComplete: true, removeOnFail: true };
    return this.#attempt(sweep.name, () => this.sweepQueue(sweep.group).add(sweep.name, {}, opts));
  }

  #options<P>(kind: JobKind<P>, payload: P, delay?: number) {
    return {
      removeOnComplete: 1000,
      removeOnFail: 5000,
      ...kind.options,
      jobId: kind.id(payload),
      ...(delay !== undefined && delay > 0 && { delay: Math.ceil(delay) }),
    };
  }

  async #attempt(name: string, enqueue: () => Promise<unknown>): Promise<boolean> {
    try {
      await enqueue();
      return true;
    } catch (err) {
      this.#logger.warn({ err, job: name }, "enqueue failed; the sweep will pick it up");
      return false;
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.close().catch(() => {})));
    this.connection.disconnect();
  }
}

import type { JobsOptions } from "bullmq";
import type { WorkerGroup } from "../config.ts";

/**
 * A kind of job as producers see it: its name, the worker group (and so the
 * queue) that runs it, how its id is built from its payload, and how long
 * Redis keeps it. Declared in each domain's `*-queue.ts` next to the enqueue
 * functions, with no reference to the handler, so a use case can enqueue
 * without importing the job that calls it back (no import cycles). Handlers
 * are bound to kinds in the domain's `jobs.ts` (define-job.ts).
 *
 * Job ids de-duplicate: BullMQ refuses a second job with the same id while the
 * first exists. Every id is built here, by `id(payload)`, never at a call site.
 */
export interface JobKind<P> {
  readonly name: string;
  readonly group: WorkerGroup;
  /** Deterministic id for this payload (no ":" and not all digits; see jobId). */
  id(payload: P): string;
  /** Options every job of this kind gets (retention); a call adds only its delay. */
  readonly options?: Readonly<Pick<JobsOptions, "removeOnComplete" | "removeOnFail">>;
}

/**
 * A recurring sweep: a job scheduler that runs `every` ms, (re)declared by
 * every worker of its group. Sweeps carry no payload and need no id.
 */
export interface SweepKind {
  readonly name: string;
  readonly group: WorkerGroup;
  every(config: { sweepIntervalMs: number; reconcileIntervalMs: number }): number;
}

/**
 * The queue a group's sweeps run on, apart from its jobs: a sweep runs every
 * few hundred ms (the relay's every 0.5 s), and in the group's own queue its
 * runs would bury the deliveries and renewals an operator looks for there.
 */
export const sweepQueueName = (group: WorkerGroup): string => `${group}-sweeps`;

export const jobKind = <P>(kind: JobKind<P>): JobKind<P> => kind;
export const sweepKind = (kind: SweepKind): SweepKind => kind;

/** Jobs that leave Redis when they end: the id only de-duplicates while one waits or runs. */
export const ONE_SHOT = { removeOnComplete: true, removeOnFail: true } as const;

/** Joins id parts; ":" is BullMQ's key separator and cannot appear in an id. */
export function jobId(...parts: string[]): string {
  return parts.join("-").replace(/:/g, "_");
}

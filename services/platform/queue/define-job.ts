import type { ServiceDeps } from "../service-deps.ts";
import type { RpcClients } from "../rpc/clients.ts";
import type { WorkerGroup } from "../config.ts";

/** What a job handler gets: the same dependencies as an RPC adapter, plus the queues. */
export interface JobDeps extends ServiceDeps {
  rpc: RpcClients;
}

/**
 * A job kind: its name, the worker group (and so the queue) that runs it, and
 * a thin handler that calls a use case. `every` makes it a recurring sweep
 * (a BullMQ job scheduler) instead of an on-demand job.
 */
export interface JobDefinition<P = unknown> {
  name: string;
  group: WorkerGroup;
  every?: number | ((deps: { sweepIntervalMs: number; reconcileIntervalMs: number }) => number);
  handle(deps: JobDeps, payload: P): Promise<void>;
}

export const defineJob = <P>(job: JobDefinition<P>): JobDefinition<P> => job;

/**
 * Job ids de-duplicate: BullMQ refuses a second job with the same id while the
 * first exists. Ids must not contain ":" nor be all digits.
 */
export function jobId(...parts: string[]): string {
  return parts.join("-").replace(/:/g, "_");
}

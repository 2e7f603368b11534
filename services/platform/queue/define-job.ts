import type { ServiceDeps } from "../service-deps.ts";
import type { JobKind, SweepKind } from "./job-kind.ts";

/** What a job handler gets: the same dependencies as an RPC adapter (queues and RPC clients included). */
export type JobDeps = ServiceDeps;

/** A handler bound to its job kind; jobs are thin: one call into a use case. */
export interface JobHandler<P> {
  kind: JobKind<P>;
  handle(deps: JobDeps, payload: P): Promise<void>;
}

/** A handler bound to a recurring sweep. */
export interface SweepHandler {
  kind: SweepKind;
  handle(deps: JobDeps): Promise<void>;
}

// eslint-style `any`: the registry holds handlers of every payload type; each is typed where it is defined.
export type AnyHandler = JobHandler<any> | SweepHandler;

export const handleJob = <P>(kind: JobKind<P>, handle: (deps: JobDeps, payload: P) => Promise<void>): JobHandler<P> => ({ kind, handle });
export const handleSweep = (kind: SweepKind, handle: (deps: JobDeps) => Promise<void>): SweepHandler => ({ kind, handle });

export const isSweep = (kind: JobKind<unknown> | SweepKind): kind is SweepKind => "every" in kind;

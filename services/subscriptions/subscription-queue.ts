import { jobId, jobKind, sweepKind } from "../platform/queue/job-kind.ts";
import type { Queues } from "../platform/queue/queues.ts";

/**
 * The subscriptions' `scheduler` jobs as producers see them (handlers: jobs.ts).
 * Expiry is a delayed job per subscription due at authorizationExpiresAt; it
 * only makes expiry prompt: the sweep finds anything it missed (Redis
 * flushed, sandbox clock advanced).
 */
export const expireAuthorizationKind = jobKind<{ subscriptionId: string }>({
  name: "subscriptions.expire-authorization",
  group: "scheduler",
  id: (p) => jobId("expire-authorization", p.subscriptionId),
});

/**
 * Every sweepIntervalMs, on the service clock: finish charges a crash left
 * in flight (first payments, renewals, immediate plan-change charges), then
 * expire every authorization that is due.
 */
export const subscriptionsSweep = sweepKind({ name: "subscriptions.sweep", group: "scheduler", every: (c) => c.sweepIntervalMs });

export const subscriptionJobKinds = [expireAuthorizationKind, subscriptionsSweep];

/** After commit only. If Redis is down the expiry sweep still finds it in Postgres. */
export function scheduleAuthorizationExpiry(queues: Queues, subscriptionId: string, delayMs: number): Promise<boolean> {
  return queues.add(expireAuthorizationKind, { subscriptionId }, { delay: delayMs });
}

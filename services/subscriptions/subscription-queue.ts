import { jobId, jobKind, sweepKind } from "../platform/queue/job-kind.ts";

/**
 * The subscriptions' `scheduler` jobs as producers see them (handlers: jobs.ts).
 * Expiry is the sweep's (set-based, on the service clock); nothing enqueues
 * this job any more: its handler stays for jobs an earlier version queued.
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

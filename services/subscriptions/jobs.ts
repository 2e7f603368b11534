import { defineJob } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import { expireAuthorization, expireDueAuthorizations } from "./expire-authorization.ts";
import { settleStaleCharges } from "./charges/settle-stale-charges.ts";
import { subscriptionPorts } from "./ports.ts";

/**
 * Delayed job, one per subscription (jobId "expire-authorization-<id>"),
 * due at authorizationExpiresAt. Only makes expiry prompt: the sweep below
 * finds anything it missed (Redis flushed, sandbox clock advanced).
 */
export const expireAuthorizationJob = defineJob<{ subscriptionId: string }>({
  name: "subscriptions.expire-authorization",
  group: "scheduler",
  async handle(deps, payload) {
    await deps.clock.sync();
    await expireAuthorization(contextFor(deps), payload.subscriptionId);
  },
});

/**
 * Every sweepIntervalMs, on the service clock: finish charges a crash left
 * in flight (first payments, renewals, immediate plan-change charges), then
 * expire every authorization that is due.
 */
export const subscriptionsSweepJob = defineJob<Record<string, never>>({
  name: "subscriptions.sweep",
  group: "scheduler",
  every: (c) => c.sweepIntervalMs,
  async handle(deps) {
    await deps.clock.sync();
    await settleStaleCharges(contextFor(deps), subscriptionPorts(deps));
    await expireDueAuthorizations(contextFor(deps));
  },
});

export const subscriptionJobs = [expireAuthorizationJob, subscriptionsSweepJob];

import { defineJob } from "../../platform/queue/define-job.ts";
import { contextFor } from "../../platform/service-deps.ts";
import { applyDuePlanChanges, applyScheduledChange } from "./apply-scheduled-change.ts";
import { cancelChangeSessionsOfEndedSubscriptions } from "./cancel-change-sessions.ts";
import { expireChangeSession, expireDueChangeSessions } from "./expire-change-session.ts";

/**
 * Delayed job, one per session (jobId "expire-change-session-<id>"), due at
 * its expiresAt. Only makes expiry prompt: the sweep finds what it missed.
 */
export const expireChangeSessionJob = defineJob<{ changeSessionId: string }>({
  name: "subscriptions.expire-change-session",
  group: "scheduler",
  async handle(deps, payload) {
    await deps.clock.sync();
    await expireChangeSession(contextFor(deps), payload.changeSessionId);
  },
});

/**
 * Delayed job, one per scheduled change (jobId "apply-plan-change-<id>"), due
 * at the subscription's next billing date. Applies the change if it is due
 * (not while paused); otherwise the sweep or the renewal engine does later.
 */
export const applyPlanChangeJob = defineJob<{ changeSessionId: string }>({
  name: "subscriptions.apply-plan-change",
  group: "scheduler",
  async handle(deps, payload) {
    await deps.clock.sync();
    await applyScheduledChange(contextFor(deps), payload.changeSessionId);
  },
});

/**
 * Every sweepIntervalMs, on the service clock: expire sessions past their
 * expiry, apply scheduled
 * changes that are due, and cancel live sessions of subscriptions that ended
 * by another path than the merchant's cancel. (Immediate charges a crash left
 * in flight are finished by the subscriptions sweep, settleStaleCharges, with
 * every other pending charge.)
 */
export const changeSessionsSweepJob = defineJob<Record<string, never>>({
  name: "subscriptions.change-sessions-sweep",
  group: "scheduler",
  every: (c) => c.sweepIntervalMs,
  async handle(deps) {
    await deps.clock.sync();
    await expireDueChangeSessions(contextFor(deps));
    await applyDuePlanChanges(contextFor(deps));
    await cancelChangeSessionsOfEndedSubscriptions(contextFor(deps));
  },
});

export const changeSessionJobs = [expireChangeSessionJob, applyPlanChangeJob, changeSessionsSweepJob];

import { jobId, jobKind, sweepKind } from "../../platform/queue/job-kind.ts";
import type { Queues } from "../../platform/queue/queues.ts";

/**
 * Change sessions' `scheduler` jobs as producers see them (handlers:
 * change-session-jobs.ts). Both delayed jobs only make things prompt: the
 * sweep finds what they missed.
 */
/** One per session, due at its expiresAt. */
export const expireChangeSessionKind = jobKind<{ changeSessionId: string }>({
  name: "subscriptions.expire-change-session",
  group: "scheduler",
  id: (p) => jobId("expire-change-session", p.changeSessionId),
});

/**
 * One per scheduled change, due at the subscription's next billing date.
 * Applies the change if it is due (not while paused); otherwise the sweep or
 * the renewal engine does later.
 */
export const applyPlanChangeKind = jobKind<{ changeSessionId: string }>({
  name: "subscriptions.apply-plan-change",
  group: "scheduler",
  id: (p) => jobId("apply-plan-change", p.changeSessionId),
});

/**
 * Every sweepIntervalMs, on the service clock: expire sessions past their
 * expiry, apply scheduled changes that are due, and cancel live sessions of
 * subscriptions that ended by another path than the merchant's cancel.
 * (Immediate charges a crash left in flight are finished by the subscriptions
 * sweep, settleStaleCharges, with every other pending charge.)
 */
export const changeSessionsSweep = sweepKind({ name: "subscriptions.change-sessions-sweep", group: "scheduler", every: (c) => c.sweepIntervalMs });

export const changeSessionJobKinds = [expireChangeSessionKind, applyPlanChangeKind, changeSessionsSweep];

/** After commit only. If Redis is down the expiry sweep still finds it in Postgres. */
export function scheduleChangeSessionExpiry(queues: Queues, changeSessionId: string, delayMs: number): Promise<boolean> {
  return queues.add(expireChangeSessionKind, { changeSessionId }, { delay: delayMs });
}

/** After commit only. If Redis is down, the sweep (and the renewal engine) still apply it from Postgres. */
export function schedulePlanChange(queues: Queues, changeSessionId: string, delayMs: number): Promise<boolean> {
  return queues.add(applyPlanChangeKind, { changeSessionId }, { delay: delayMs });
}

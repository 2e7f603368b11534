import { statusIn } from "../platform/status-machine.ts";
import { subscriptionMachine } from "./status-machine.ts";
import { authorizationMachine } from "./authorization-status.ts";
import { changeSessionMachine } from "./change-sessions/change-session-status-machine.ts";

/**
 * The "due" conditions of the subscription sweeps, written once and built
 * from the status machines: the sweeps, their lag probes (due-work.ts) and
 * test support all use these, so "due" cannot mean two things. Each takes
 * its timestamps as `?` parameters, in the order its comment gives.
 */

/** Billed on their billing date (what a pause may stop): ACTIVE, TRIALING. */
const BILLED = subscriptionMachine.statesFrom("pause");
/** Retried on their dunning date: those a failed charge leaves in retries (PAST_DUE). */
const RETRIED = subscriptionMachine.statesFrom("retries_exhausted");

/** The statuses DUE_FOR_RENEWAL takes (the rows of the renewal claim's index, migration 0040). */
export const DUE_STATUSES: readonly string[] = [...BILLED, ...RETRIED];

/**
 * Billed on its date, or retried on its dunning date (table reference `s`,
 * default the unaliased table; parameters: now, now). What the partial
 * indexes on next_billing_at and next_retry_at serve.
 */
export const DUE_FOR_RENEWAL = (s = "subscriptions") =>
  `((${statusIn(`${s}.status`, BILLED)} and ${s}.next_billing_at <= ?) or (${statusIn(`${s}.status`, RETRIED)} and ${s}.next_retry_at <= ?))`;

/** When a due subscription is due: its retry date while retried, its billing date otherwise. */
export const RENEWAL_DUE_AT = (s = "subscriptions") => `case when ${statusIn(`${s}.status`, RETRIED)} then ${s}.next_retry_at else ${s}.next_billing_at end`;

/** An approval link still open past its expiry (alias `a`; parameter: now). */
export const AUTHORIZATION_EXPIRED = (a = "subscription_authorizations") =>
  `${statusIn(`${a}.status`, authorizationMachine.statesFrom("expire"))} and ${a}.expires_at <= ?`;

/**
 * A scheduled plan change whose billing date has come (aliases `cs` for the
 * session, `s` for its subscription; parameters: now, now): applied only to a
 * subscription that is billed (not paused, not past due) on or after the date.
 */
export const PLAN_CHANGE_DUE = (cs = "cs", s = "s") =>
  `${statusIn(`${cs}.status`, changeSessionMachine.statesFrom("apply"))} and ${cs}.scheduled_for <= ?` +
  ` and ${statusIn(`${s}.status`, BILLED)} and ${s}.next_billing_at <= ? and ${s}.next_billing_at >= ${cs}.scheduled_for`;

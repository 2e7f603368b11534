import { defineStatusMachine, type Move } from "../platform/status-machine.ts";
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from "./contract.ts";

/**
 * The subscription status machine: the one table of legal moves. Every use
 * case that changes a status asks `nextStatus`, inside a transaction that
 * holds the subscription row lock, so concurrent requests can never make a
 * move this table does not list. The status table in docs/merchant-api.md mirrors it.
 */
export { SUBSCRIPTION_STATUSES, type SubscriptionStatus };

export type SubscriptionEvent =
  | "approve" //            customer approved, no trial: first payment taken
  | "approve_with_trial" // customer approved, plan has trialDays > 0
  | "expire" //             the authorization expired unapproved
  | "decline" //            customer pressed Cancel on the authorization page
  | "pause"
  | "resume"
  | "cancel" //             merchant cancelled
  | "charge_succeeded" //   a renewal (or the trial's first charge, or a retry) was paid
  | "charge_failed" //      a renewal charge (or a scheduled retry) failed
  | "retries_exhausted" //  the last scheduled retry failed, DUNNING_FINAL_STATUS=UNPAID
  | "retries_exhausted_cancel"; // the same with DUNNING_FINAL_STATUS=CANCELLED

/** `to: "PAUSED_FROM"` means the status the subscription was paused from. */
type Target = SubscriptionStatus | "PAUSED_FROM";

const MOVES: readonly Move<SubscriptionStatus, SubscriptionEvent, Target>[] = [
  { from: "PENDING_APPROVAL", event: "approve", to: "ACTIVE" },
  { from: "PENDING_APPROVAL", event: "approve_with_trial", to: "TRIALING" },
  { from: "PENDING_APPROVAL", event: "expire", to: "EXPIRED" },
  { from: "PENDING_APPROVAL", event: "decline", to: "CANCELLED" },
  { from: "PENDING_APPROVAL", event: "cancel", to: "CANCELLED" },
  { from: "ACTIVE", event: "pause", to: "PAUSED" },
  { from: "TRIALING", event: "pause", to: "PAUSED" },
  { from: "PAUSED", event: "resume", to: "PAUSED_FROM" },
  { from: "ACTIVE", event: "cancel", to: "CANCELLED" },
  { from: "TRIALING", event: "cancel", to: "CANCELLED" },
  { from: "PAUSED", event: "cancel", to: "CANCELLED" },
  // Recurring billing (renewals/). PAST_DUE cannot be paused (409); UNPAID can only be cancelled.
  { from: "ACTIVE", event: "charge_succeeded", to: "ACTIVE" },
  { from: "TRIALING", event: "charge_succeeded", to: "ACTIVE" },
  { from: "PAST_DUE", event: "charge_succeeded", to: "ACTIVE" },
  { from: "ACTIVE", event: "charge_failed", to: "PAST_DUE" },
  { from: "TRIALING", event: "charge_failed", to: "PAST_DUE" },
  { from: "PAST_DUE", event: "charge_failed", to: "PAST_DUE" },
  { from: "PAST_DUE", event: "retries_exhausted", to: "UNPAID" },
  { from: "PAST_DUE", event: "retries_exhausted_cancel", to: "CANCELLED" },
  { from: "PAST_DUE", event: "cancel", to: "CANCELLED" },
  { from: "UNPAID", event: "cancel", to: "CANCELLED" },
];

const VERB: Record<SubscriptionEvent, string> = {
  approve: "approve",
  approve_with_trial: "approve",
  expire: "expire",
  decline: "decline",
  pause: "pause",
  resume: "resume",
  cancel: "cancel",
  charge_succeeded: "record a paid renewal for",
  charge_failed: "record a failed renewal for",
  retries_exhausted: "end the retries of",
  retries_exhausted_cancel: "end the retries of",
};

export const subscriptionMachine = defineStatusMachine<SubscriptionStatus, SubscriptionEvent, Target>(
  "subscription",
  SUBSCRIPTION_STATUSES,
  MOVES,
  (from, event) => `cannot ${VERB[event]} a subscription in status ${from}`,
);

/** Statuses a renewal charge may settle on: the subscriptions being billed, which the dashboard counts as live. */
export const BILLED_STATUSES = subscriptionMachine.statesFrom("charge_succeeded");

/** Statuses nothing leaves. A terminal subscription frees its externalReference. */
export const TERMINAL_STATUSES = subscriptionMachine.terminal;

/** The status `event` leads to from `current` (resume: the status it was paused from), or 409 INVALID_STATUS_TRANSITION. */
export function nextStatus(current: string, event: SubscriptionEvent, pausedFrom?: string | null): SubscriptionStatus {
  const to = subscriptionMachine.next(current, event);
  if (to !== "PAUSED_FROM") return to;
  if (pausedFrom !== "ACTIVE" && pausedFrom !== "TRIALING") {
    // A paused row always records where it came from (a database check enforces it).
    throw new Error(`subscription paused without a valid paused_from_status (${pausedFrom})`);
  }
  return pausedFrom;
}

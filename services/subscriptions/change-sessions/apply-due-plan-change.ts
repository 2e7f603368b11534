import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../../platform/clock.ts";
import type { SubscriptionRow } from "../entities.ts";
import { scheduledSessionOf } from "./change-session-store.ts";
import { switchPlan } from "./switch-plan.ts";
import { chargeInFlight } from "../charges/wait-for-charges.ts";

/** Statuses in which a due scheduled change is applied (not PAUSED, not PAST_DUE, not ended). */
const APPLIES_IN: readonly string[] = ["ACTIVE", "TRIALING"];

/**
 * Applies the subscription's SCHEDULED change session if it is due, inside
 * the caller's transaction (the caller has locked the subscription row).
 * Returns true when the plan was switched (session APPLIED, events
 * change_session.applied and subscription.plan_changed recorded).
 *
 * Due means: a billing is due now (nextBillingAt ≤ now) and it is at or
 * after the session's scheduledFor (the next billing date at approval). So a
 * change scheduled while paused waits for the first billing after resume, and
 * a PAST_DUE subscription's retries of the old period keep the old amount
 * (the change applies once it is ACTIVE again, at its next billing). A
 * renewal charge in flight (opened before the change was due) keeps its
 * price; the change applies at the billing after it.
 *
 * Contract with recurring billing: the renewal engine calls this before it
 * computes a renewal's amount, so that renewal is charged at the new plan's
 * amount; the change-session job and sweep call it too (apply-scheduled-change.ts).
 * Safe to call any number of times: once applied there is no scheduled session.
 */
export async function applyDuePlanChange(em: EntityManager, clock: Clock, subscription: SubscriptionRow): Promise<boolean> {
  const now = clock.now();
  if (!APPLIES_IN.includes(subscription.status)) return false;
  if (!subscription.nextBillingAt || subscription.nextBillingAt.getTime() > now.getTime()) return false;
  const session = await scheduledSessionOf(em, subscription.id);
  if (!session?.scheduledFor || session.scheduledFor.getTime() > now.getTime()) return false;
  if (subscription.nextBillingAt.getTime() < session.scheduledFor.getTime()) return false;
  // A renewal charge in flight was priced at the current plan: applying now would put plan_changed between that
  // charge and its renewed (at the old price). The change waits for the billing after it.
  if (await chargeInFlight(em, subscription.id, "RENEWAL")) return false;
  await switchPlan(em, clock, subscription, session, "apply");
  return true;
}

import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../../platform/clock.ts";
import { recordEvent } from "../../events/record-event.ts";
import type { SubscriptionRow } from "../entities.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";
import { changeSessionMachine } from "./change-session-status-machine.ts";
import { changeSessionRecord } from "./change-session-record.ts";
import { subscriptionRecord } from "../subscription-record.ts";
import { currentAuthorization } from "../subscription-store.ts";
import { scheduledSessionOf } from "./change-session-store.ts";
import { touch } from "../../platform/record-version.ts";

/**
 * The one place a subscription changes plan, inside the caller's transaction
 * (subscription and session rows locked). Records, in that transaction,
 * change_session.approved (for an immediate approval), change_session.applied
 * and subscription.plan_changed.
 *
 * Anchor rule: the anchor, the current period (it is paid for) and the next
 * billing date are kept, so the next renewal is the first one charged at the
 * new plan's amount. When the new plan bills on another interval or interval
 * count, the renewal engine re-anchors at that next billing date before
 * billing it (renewals/billing-periods.ts anchorFor): the new plan's periods
 * count from the first period billed at its price. A trial keeps its end.
 */
export async function switchPlan(
  em: EntityManager,
  clock: Clock,
  sub: SubscriptionRow,
  session: ChangeSessionRow,
  event: "approve_immediate" | "apply",
): Promise<void> {
  const now = clock.now();
  const previousPlanId = sub.planId;
  session.status = changeSessionMachine.next(session.status, event);
  if (event === "approve_immediate") session.approvedAt = now;
  session.appliedAt = now;
  touch(session, now);

  sub.planId = session.requestedPlanId;
  touch(sub, now);

  if (event === "approve_immediate") {
    await supersedeScheduled(em, clock, sub.id, session.id);
    recordEvent(em, clock, { merchantId: sub.merchantId, type: "subscription.change_session.approved", data: changeSessionRecord(session) });
  }
  recordEvent(em, clock, { merchantId: sub.merchantId, type: "subscription.change_session.applied", data: changeSessionRecord(session) });
  const authorization = await currentAuthorization(em, sub.id);
  recordEvent(em, clock, {
    merchantId: sub.merchantId,
    type: "subscription.plan_changed",
    data: { ...subscriptionRecord(sub, authorization), previousPlanId, changeSessionId: session.id },
  });
}

/** A newly approved change replaces the scheduled one (SCHEDULED → CANCELLED, reason SUPERSEDED). */
export async function supersedeScheduled(em: EntityManager, clock: Clock, subscriptionId: string, byId: string): Promise<void> {
  const scheduled = await scheduledSessionOf(em, subscriptionId);
  if (!scheduled || scheduled.id === byId) return;
  const now = clock.now();
  scheduled.status = changeSessionMachine.next(scheduled.status, "supersede");
  scheduled.cancellationReason = "SUPERSEDED";
  scheduled.supersededBy = byId;
  scheduled.cancelledAt = now;
  touch(scheduled, now);
  recordEvent(em, clock, { merchantId: scheduled.merchantId, type: "subscription.change_session.cancelled", data: changeSessionRecord(scheduled) });
  // Written now: the unique "one scheduled per subscription" index must see it gone before another becomes SCHEDULED.
  await em.flush();
}

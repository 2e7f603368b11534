import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../../platform/clock.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { recordEvent } from "../../events/record-event.ts";
import { SubscriptionChangeSession } from "./change-session-entities.ts";
import { changeSessionMachine } from "./change-session-status-machine.ts";
import { changeSessionRecord } from "./change-session-record.ts";
import { endedSubscriptionsWithLiveChangeSessions } from "./change-session-store.ts";
import { lockSubscription } from "../subscription-store.ts";
import { LockMode } from "@mikro-orm/core";
import { touch } from "../../platform/record-version.ts";

/**
 * The subscription has ended: its scheduled change (and any session still
 * awaiting approval) becomes CANCELLED with reason SUBSCRIPTION_CANCELLED,
 * one change_session.cancelled event each. Called in the cancelling
 * transaction (cancel-subscription.ts, subscription row locked); an immediate
 * charge in flight has been settled before (the cancel waits for it).
 */
export async function cancelChangeSessionsOf(em: EntityManager, clock: Clock, subscriptionId: string, now = clock.now()): Promise<number> {
  const live = await em.find(
    SubscriptionChangeSession,
    { subscriptionId, status: { $in: ["PENDING_APPROVAL", "SCHEDULED"] } },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true, orderBy: { createdAt: "asc", id: "asc" } },
  );
  for (const session of live) {
    session.status = changeSessionMachine.next(session.status, "cancel");
    session.cancellationReason = "SUBSCRIPTION_CANCELLED";
    session.cancelledAt = now;
    touch(session, now);
    recordEvent(em, clock, { merchantId: session.merchantId, type: "subscription.change_session.cancelled", data: changeSessionRecord(session) });
  }
  return live.length;
}

/**
 * The sweep's safety net for subscriptions that ended by another path than
 * the merchant's cancel (dunning's final CANCELLED, an expiry): their live
 * change sessions are cancelled in a transaction of their own.
 */
export async function cancelChangeSessionsOfEndedSubscriptions(ctx: UseCaseContext): Promise<number> {
  const ended = await endedSubscriptionsWithLiveChangeSessions(ctx.em);
  let cancelled = 0;
  for (const id of ended) {
    cancelled += await ctx.em.fork().transactional(async (em) => {
      const sub = await lockSubscription(em, id);
      if (sub.status !== "CANCELLED" && sub.status !== "EXPIRED") return 0;
      return cancelChangeSessionsOf(em, ctx.clock, sub.id);
    });
  }
  return cancelled;
}

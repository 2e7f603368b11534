import type { UseCaseContext } from "../platform/use-case.ts";
import { transitionSubscription } from "./transition-subscription.ts";
import { findSubscription } from "./subscription-store.ts";
import { fetchPlan, planInterval, type SubscriptionPorts } from "./ports.ts";
import { skipPeriodsMissedWhilePaused } from "./renewals/billing-periods.ts";

/**
 * PAUSED → the status it was paused from. The billing anchor is kept; billing
 * dates that passed while paused are skipped without charge, so the next
 * billing date is the first anchor date at or after now (README "Recurring
 * billing", renewals/billing-periods.ts). Resumed before its next billing
 * date, nothing moves.
 */
export async function resumeSubscription(ctx: UseCaseContext, ports: SubscriptionPorts, merchantId: string, id: string) {
  const current = await findSubscription(ctx.em, id, merchantId);
  // The plan's cadence counts the skipped periods; fetched before the transaction (no RPC while it is open).
  const plan = current.status === "PAUSED" ? await fetchPlan(ports, merchantId, current.planId) : undefined;
  return transitionSubscription(ctx, {
    merchantId,
    id,
    event: "resume",
    eventType: "subscription.resumed",
    apply(sub, _from, now) {
      sub.pausedFromStatus = null;
      sub.pausedAt = null;
      if (plan) skipPeriodsMissedWhilePaused(sub, { interval: planInterval(plan), count: plan.intervalCount }, now);
    },
  });
}

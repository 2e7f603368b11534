import type { UseCaseContext } from "../platform/use-case.ts";
import { transitionSubscription } from "./transition-subscription.ts";
import { findSubscription } from "./subscription-store.ts";
import { fetchPlan, planInterval, type SubscriptionPorts } from "./ports.ts";
import { skipPeriodsMissedWhilePaused } from "./renewals/billing-periods.ts";
import { afterChargeSettles, refuseUnderCharge } from "./charges/wait-for-charges.ts";

/** The plan changed between reading it and taking the lock: read it again. */
class PlanChangedMeanwhile extends Error {}

const PLAN_READS = 5;

/**
 * PAUSED → the status it was paused from. The billing anchor is kept; billing
 * dates that passed while paused are skipped without charge, so the next
 * billing date is the first anchor date at or after now (docs/merchant-api.md "Recurring
 * billing", renewals/billing-periods.ts). Resumed before its next billing
 * date, nothing moves.
 *
 * The plan's cadence counts the skipped periods. It is fetched over RPC
 * before the transaction (no RPC while a lock is held) and checked under the
 * lock: if the subscription's plan changed meanwhile (an IMMEDIATE change
 * approved while paused), it is read again, so the periods are never counted
 * with the old cadence. A charge in flight is settled first.
 */
export async function resumeSubscription(ctx: UseCaseContext, ports: SubscriptionPorts, merchantId: string, id: string) {
  for (let read = 1; ; read += 1) {
    const current = await findSubscription(ctx.em.fork(), id, merchantId);
    const plan = current.status === "PAUSED" ? await fetchPlan(ports, merchantId, current.planId) : undefined;
    try {
      return await afterChargeSettles(ctx, ports, () =>
        transitionSubscription(ctx, {
          merchantId,
          id,
          event: "resume",
          eventType: "subscription.resumed",
          async guard(em, sub) {
            if (plan && sub.planId !== plan.id) throw new PlanChangedMeanwhile();
            await refuseUnderCharge(em, sub.id);
          },
          apply(sub, _from, now) {
            sub.pausedFromStatus = null;
            sub.pausedAt = null;
            if (plan) skipPeriodsMissedWhilePaused(sub, { interval: planInterval(plan), count: plan.intervalCount }, now);
          },
        }),
      );
    } catch (err) {
      if (!(err instanceof PlanChangedMeanwhile) || read >= PLAN_READS) throw err;
    }
  }
}

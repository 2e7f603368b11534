import type { UseCaseContext } from "../../platform/use-case.ts";
import { recordEvent } from "../../events/record-event.ts";
import { Subscription, type SubscriptionRow } from "../entities.ts";
import { lockSubscription } from "../subscription-store.ts";
import type { SubscriptionPorts } from "../ports.ts";
import { DAY_MS } from "./billing-policy.ts";
import { applyCoverage, assessCoverage } from "./charge-at-risk.ts";
import { upcomingPrice } from "./upcoming-price.ts";
import { subscriptionsToNotify } from "./renewal-store.ts";

const NOTICE_BATCH = 500;

/**
 * The advance-notice sweep's query: ACTIVE or TRIALING subscriptions whose
 * next billing date is within their merchant's notice days (its settings, or
 * `defaultNoticeDays` for a merchant that set none) on the service clock and
 * whose upcoming period has not been announced yet. One query for every
 * merchant (the settings row joined).
 */
export async function findUpcomingCharges(ctx: UseCaseContext, defaultNoticeDays: number): Promise<{ subscriptionId: string; periodIndex: number }[]> {
  const now = ctx.clock.now();
  const rows = await subscriptionsToNotify(ctx.em, now, defaultNoticeDays, NOTICE_BATCH);
  return rows.map((r) => ({ subscriptionId: r.id, periodIndex: r.next_period_index }));
}

/**
 * Records subscription.charge_upcoming for the subscription's next period,
 * once per period (the database guards it: notified_period_index is set in the
 * same transaction as the event). The amount is the plan's that renewal will
 * charge (the current one, or a scheduled change's due by then), in its currency, with an estimate in the funding asset at today's rate (rounded
 * up, as charges are) and whether the funding account covers it now, so the
 * merchant can warn the customer before a charge fails. When neither the
 * funding asset nor a fallback covers it, subscription.charge_at_risk is
 * recorded too (once per period: charge-at-risk.ts). Returns true when this
 * call recorded the notice.
 */
export async function notifyUpcomingCharge(ctx: UseCaseContext, ports: SubscriptionPorts, subscriptionId: string): Promise<boolean> {
  const now = ctx.clock.now();
  const sub = await ctx.em.fork().findOne(Subscription, { id: subscriptionId });
  if (!sub || !sub.fundingAsset) return false;
  const noticeDays = (await ports.policies.forMerchant(ctx.em.fork(), sub.merchantId)).noticeDays;
  if (!inWindow(sub, now, noticeDays)) return false;
  // What that renewal will charge (a scheduled change due by then included): the at-risk recheck uses the same price.
  const { plan, price } = await upcomingPrice(ctx.em.fork(), ports, sub);
  const coverage = await assessCoverage(ports, sub, plan);
  const quote = coverage.quote;

  return ctx.em.fork().transactional(async (em) => {
    const locked = await lockSubscription(em, subscriptionId);
    if (!inWindow(locked, ctx.clock.now(), noticeDays) || locked.nextPeriodIndex !== sub.nextPeriodIndex || locked.planId !== sub.planId) return false;
    locked.notifiedPeriodIndex = locked.nextPeriodIndex;
    recordEvent(em, ctx.clock, {
      merchantId: locked.merchantId,
      type: "subscription.charge_upcoming",
      data: {
        object: "upcoming_charge",
        subscriptionId: locked.id,
        // The notice is bookkeeping, not a change: the version is the subscription's as it stands.
        subscriptionVersion: locked.version,
        periodIndex: locked.nextPeriodIndex,
        date: locked.nextBillingAt!.toISOString(),
        amount: price.amount,
        subtotal: price.subtotal,
        discountAmount: price.discountAmount,
        creditApplied: price.creditApplied,
        currency: plan.currency,
        asset: locked.fundingAsset,
        assetAmount: quote?.assetAmount ?? null,
        rate: quote?.rate ?? null,
        balanceCovers: quote ? coverage.shortfall === "0" : false,
      },
    });
    applyCoverage(em, ctx.clock, locked, { ...coverage, planId: locked.planId });
    return true;
  });
}

function inWindow(sub: SubscriptionRow, now: Date, noticeDays: number): boolean {
  if (noticeDays <= 0 || (sub.status !== "ACTIVE" && sub.status !== "TRIALING") || !sub.nextBillingAt) return false;
  const at = sub.nextBillingAt.getTime();
  const notYet = sub.notifiedPeriodIndex == null || sub.notifiedPeriodIndex < sub.nextPeriodIndex;
  return notYet && at > now.getTime() && at <= now.getTime() + noticeDays * DAY_MS;
}

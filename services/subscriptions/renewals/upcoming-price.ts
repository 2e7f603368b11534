import type { EntityManager } from "@mikro-orm/postgresql";
import type { SubscriptionRow } from "../entities.ts";
import { SubscriptionChangeSession } from "../change-sessions/change-session-entities.ts";
import { periodPrice, type PeriodPrice } from "../pricing/period-price.ts";
import { fetchPlanPricing, type PlanPricing, type SubscriptionPorts } from "../ports.ts";

/**
 * What the subscription's next renewal will charge, read now: the plan of a
 * scheduled change due by then (it is applied before that renewal is charged),
 * else the current plan, at its period price with the discount and credit as
 * they stand (pricing/period-price.ts). The notice and the at-risk recheck
 * both assess coverage at this one price. `plan` is the plan's pricing with
 * `amount` set to that price.
 */
export async function upcomingPrice(em: EntityManager, ports: SubscriptionPorts, sub: SubscriptionRow): Promise<{ plan: PlanPricing; price: PeriodPrice }> {
  const change = await em.findOne(SubscriptionChangeSession, { subscriptionId: sub.id, status: "SCHEDULED", scheduledFor: { $lte: sub.nextBillingAt! } });
  const listed = await fetchPlanPricing(ports, sub.merchantId, change?.requestedPlanId ?? sub.planId);
  const price = periodPrice(listed.amount, listed.currency, sub);
  return { plan: { ...listed, amount: price.amount }, price };
}

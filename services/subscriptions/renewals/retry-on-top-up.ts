import type { UseCaseContext } from "../../platform/use-case.ts";
import { quotePlan } from "../funding.ts";
import { fetchPlan, type SubscriptionPorts } from "../ports.ts";
import { Subscription } from "../entities.ts";
import { covers, fundingBalance } from "./funding-balance.ts";
import { renewSubscription } from "./renew-subscription.ts";

/**
 * A wallet user's account in `asset` was credited: every PAST_DUE
 * subscription it funds whose amount due the balance now covers is retried at
 * once instead of at its next scheduled retry, oldest debt first (the balance
 * is read again before each, as each success spends it). A retry that still
 * fails (the money moved on meanwhile) leaves the dunning schedule as it was,
 * but counts against the period's attempt budget like every attempt. Only
 * for merchants whose settings keep retryOnTopUp (the default).
 * Returns how many subscriptions were retried.
 */
export async function retryPastDueOnTopUp(ctx: UseCaseContext, ports: SubscriptionPorts, walletUserId: string, asset: string): Promise<number> {
  const pastDue = await ctx.em
    .fork()
    .find(
      Subscription,
      { walletUserId, fundingAsset: asset, status: "PAST_DUE" },
      { orderBy: { pastDueSince: "asc", id: "asc" }, fields: ["id", "merchantId", "planId"] },
    );
  let retried = 0;
  for (const sub of pastDue) {
    // The merchant's setting (retryOnTopUp false: only the schedule retries).
    if (!(await ports.policies.forMerchant(ctx.em.fork(), sub.merchantId)).retryOnTopUp) continue;
    const plan = await fetchPlan(ports, sub.merchantId, sub.planId);
    const [quote, funding] = await Promise.all([quotePlan(ports, plan, asset), fundingBalance(ports, walletUserId, asset)]);
    if (!quote || !covers(funding, quote.assetAmount)) continue;
    await renewSubscription({ em: ctx.em.fork(), clock: ctx.clock }, ports, { subscriptionId: sub.id, retryNow: true });
    retried += 1;
  }
  return retried;
}

import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../../platform/clock.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { amount, compare, formatAmount, sub as subtract } from "../../platform/money.ts";
import { recordEvent } from "../../events/record-event.ts";
import { Subscription, type SubscriptionRow } from "../entities.ts";
import { lockSubscription } from "../subscription-store.ts";
import { quotePlan, type Quote } from "../funding.ts";
import type { PlanPricing, SubscriptionPorts } from "../ports.ts";
import { choosePayingAsset } from "./choose-paying-asset.ts";
import { balanceIn, readWalletSnapshot, usableAmount } from "./funding-balance.ts";
import { accountDebitedKind } from "./renewal-queue.ts";
import { upcomingPrice } from "./upcoming-price.ts";
import { accountsPayingAnnouncedCharges } from "./renewal-store.ts";

/** What the next charge would take and whether some asset of the subscription covers it, as read now (before any lock). */
interface ChargeCoverage {
  periodIndex: number;
  planId: string;
  plan: PlanPricing;
  quote: Quote | undefined;
  /** The funding asset or a fallback covers the estimated amount (within the maximum per charge). */
  covered: boolean;
  /** What the funding account lacks, in its asset ("0" when covered by it). */
  shortfall: string;
}

/**
 * Reads whether the subscription's next charge is covered: the funding
 * asset at its quote, else a fallback (choosePayingAsset's very rule, on the
 * same one read of the wallet user). The
 * shortfall is the funding asset's: the estimated amount minus its usable
 * balance (all of it when the account is frozen).
 */
export async function assessCoverage(ports: SubscriptionPorts, sub: SubscriptionRow, plan: PlanPricing): Promise<ChargeCoverage> {
  const quote = await quotePlan(ports, plan, sub.fundingAsset!);
  const wallet = await readWalletSnapshot(ports, sub.walletUserId);
  const usable = usableAmount(balanceIn(wallet, sub.fundingAsset!));
  const fundingCovers = quote !== undefined && compare(amount(usable), amount(quote.assetAmount)) >= 0;
  let covered = fundingCovers;
  if (!covered && quote && sub.fallbackAssets.length > 0) {
    const paying = await choosePayingAsset(
      ports,
      plan,
      { walletUserId: sub.walletUserId, fundingAsset: sub.fundingAsset!, fallbackAssets: sub.fallbackAssets },
      quote,
      wallet,
    );
    covered = paying.fundedByFallback;
  }
  const shortfall = !quote || fundingCovers ? "0" : formatAmount(subtract(amount(quote.assetAmount), amount(usable)));
  return { periodIndex: sub.nextPeriodIndex, planId: sub.planId, plan, quote, covered, shortfall };
}

/**
 * Inside the caller's transaction, on the locked subscription whose coverage
 * was read for its current next period: records subscription.charge_at_risk
 * once per period when nothing covers the charge (at_risk_period_index is
 * the guard), and clears the shortfall, recording nothing, once something
 * covers it again (a top-up). Returns true when it recorded the event.
 */
export function applyCoverage(em: EntityManager, clock: Clock, locked: SubscriptionRow, coverage: ChargeCoverage): boolean {
  if (locked.nextPeriodIndex !== coverage.periodIndex || locked.planId !== coverage.planId) return false;
  const flagged = locked.atRiskPeriodIndex === locked.nextPeriodIndex;
  if (coverage.covered) {
    if (flagged && locked.atRiskShortfall != null) locked.atRiskShortfall = null;
    return false;
  }
  if (flagged) {
    // Already recorded for this period: the shortfall shown follows the balance, no second event.
    locked.atRiskShortfall = coverage.shortfall;
    return false;
  }
  locked.atRiskPeriodIndex = locked.nextPeriodIndex;
  locked.atRiskShortfall = coverage.shortfall;
  recordEvent(em, clock, {
    merchantId: locked.merchantId,
    type: "subscription.charge_at_risk",
    data: {
      object: "charge_at_risk",
      subscriptionId: locked.id,
      subscriptionVersion: locked.version,
      periodIndex: locked.nextPeriodIndex,
      date: locked.nextBillingAt!.toISOString(),
      amount: formatAmount(coverage.plan.amount),
      currency: coverage.plan.currency,
      asset: locked.fundingAsset,
      assetAmount: coverage.quote?.assetAmount ?? null,
      shortfall: coverage.shortfall,
    },
  });
  return true;
}

/**
 * A balance of the wallet user changed (a credit, a debit, a freeze):
 * every subscription it may pay from that asset (funding or fallback) whose
 * next charge was announced and has not been charged yet is assessed again;
 * at-risk recorded once per period, or its shortfall cleared. Returns how
 * many events were recorded.
 */
export async function recheckChargesAtRisk(ctx: UseCaseContext, ports: SubscriptionPorts, walletUserId: string, asset: string): Promise<number> {
  const now = ctx.clock.now();
  const subs = await ctx.em.fork().find(
    Subscription,
    {
      walletUserId,
      status: { $in: ["ACTIVE", "TRIALING"] },
      nextBillingAt: { $gt: now },
      $or: [{ fundingAsset: asset }, { fallbackAssets: { $contains: [asset] } }],
    },
    { orderBy: { nextBillingAt: "asc", id: "asc" } },
  );
  let recorded = 0;
  for (const sub of subs) {
    // Only between the notice and the charge: before the notice nothing is announced yet.
    if (sub.notifiedPeriodIndex !== sub.nextPeriodIndex || !sub.fundingAsset) continue;
    // The price the notice announced (period price, a scheduled change due by then): the same rule, not the raw plan.
    const coverage = await assessCoverage(ports, sub, (await upcomingPrice(ctx.em.fork(), ports, sub)).plan);
    const did = await ctx.em.fork().transactional(async (em) => applyCoverage(em, ctx.clock, await lockSubscription(em, sub.id), coverage));
    if (did) recorded += 1;
  }
  return recorded;
}

/**
 * After charges committed (they debited their accounts): the accounts that
 * also pay another subscription's announced, not yet charged, period get an
 * accountDebited job (one query for the set, one Redis round trip; nothing
 * when no such subscription exists, the usual case).
 */
export async function enqueueRechecksAfterDebits(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  charges: readonly { id: string; walletUserId: string; asset: string; status: string }[],
): Promise<void> {
  const paid = charges.filter((c) => c.status === "SUCCEEDED");
  if (paid.length === 0) return;
  const rows = await accountsPayingAnnouncedCharges(
    ctx.em,
    paid.map((c) => c.walletUserId),
    ctx.clock.now(),
  );
  const wanted = new Set(rows.map((r) => `${r.wallet_user_id}/${r.asset}`));
  const jobs = new Map<string, { walletUserId: string; asset: string; chargeId: string }>();
  for (const c of paid) {
    const key = `${c.walletUserId}/${c.asset}`;
    if (wanted.has(key) && !jobs.has(key)) jobs.set(key, { walletUserId: c.walletUserId, asset: c.asset, chargeId: c.id });
  }
  if (jobs.size > 0) await ports.queues.addBulk(accountDebitedKind, [...jobs.values()]);
}

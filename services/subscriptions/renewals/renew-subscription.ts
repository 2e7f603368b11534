import type { UseCaseContext } from "../../platform/use-case.ts";
import { Subscription, type ChargeRow, type SubscriptionRow } from "../entities.ts";
import { lockSubscription } from "../subscription-store.ts";
import { openPeriodCharge, type PeriodFailureReason } from "../charges/open-charge.ts";
import { settleCharge } from "../charges/settle-charge.ts";
import { chargeInFlight } from "../charges/wait-for-charges.ts";
import { quotePlan } from "../funding.ts";
import { periodPrice, sameAmount } from "../pricing/period-price.ts";
import { chargeTerms } from "../pricing/price-terms.ts";
import { fetchPlanPricing, planInterval, type PlanPricing, type SubscriptionPorts } from "../ports.ts";
import { applyDuePlanChange } from "../change-sessions/apply-due-plan-change.ts";
import { anchorFor, duePeriod } from "./billing-periods.ts";
import { renewalSettled, retriesExhausted } from "./renewal-outcome.ts";
import { attemptBudget } from "./billing-policy.ts";
import { exceedsCap } from "./exceeds-cap.ts";
import { choosePayingAsset } from "./choose-paying-asset.ts";
import { enqueueRechecksAfterDebits } from "./charge-at-risk.ts";
import { touch } from "../../platform/record-version.ts";

interface RenewInput {
  subscriptionId: string;
  /** Retry a PAST_DUE subscription now instead of at its scheduled retry (its funding account was topped up). */
  retryNow?: boolean;
}

interface RenewResult {
  paid: number;
  failed: number;
  /** not_due: nothing (more) to charge; in_progress: another caller holds this period's charge; failed: a charge failed (PAST_DUE or worse). */
  stoppedBecause: "not_due" | "in_progress" | "failed" | "limit";
}

/** Periods one run charges at most (a 5-year sandbox jump of a daily plan is 1,827); the sweep resumes the rest. */
export const MAX_PERIODS_PER_RUN = 2000;

/** Due on the service clock: a billing date that has come (ACTIVE, TRIALING) or a retry (PAST_DUE). */
export function isDue(sub: SubscriptionRow, now: Date, retryNow = false): boolean {
  if (sub.status === "ACTIVE" || sub.status === "TRIALING") return sub.nextBillingAt != null && sub.nextBillingAt.getTime() <= now.getTime();
  if (sub.status === "PAST_DUE") return retryNow || (sub.nextRetryAt != null && sub.nextRetryAt.getTime() <= now.getTime());
  return false;
}

/**
 * Charges every period of one subscription that is due, oldest first, until
 * none is (catch-up after downtime or a sandbox clock jump charges each
 * missed period in order, at its own dates) or a charge fails.
 *
 * Each period follows the charge protocol (platform/wallet-calls/wallet-call.ts):
 *  1. under the subscription lock: apply a scheduled plan change that is due
 *     (so this renewal is charged at the new plan's amount), compute the
 *     period from the anchor, enforce the cap, write the PENDING charge with
 *     a lease, commit; the database allows one success and one attempt in
 *     flight per (subscription, period);
 *  2. wallet.Charge with the charge's id as idempotency key;
 *  3. one transaction settles the charge and the subscription
 *     (renewal-outcome.ts): the period advances, or dunning starts.
 * Two workers on one subscription serialise on the lock and the second finds
 * the period's charge in flight (or paid); a crash leaves a PENDING row that
 * the next run or the stale-charge sweep finishes with the same key.
 * The plan (catalog) and the quote (wallet, rounded up) are fetched before
 * the lock: no RPC is made while a transaction is open.
 */
export async function renewSubscription(ctx: UseCaseContext, ports: SubscriptionPorts, input: RenewInput): Promise<RenewResult> {
  const fresh = (): UseCaseContext => ({ em: ctx.em.fork(), clock: ctx.clock });
  const plans = new Map<string, PlanPricing>();
  let retryNow = input.retryNow === true;
  let paid = 0;
  let failed = 0;
  const count = (charge: ChargeRow) => (charge.status === "SUCCEEDED" ? (paid += 1) : charge.status === "FAILED" ? (failed += 1) : 0);
  const stop = (stoppedBecause: RenewResult["stoppedBecause"]): RenewResult => ({ paid, failed, stoppedBecause });

  let periods = 0;
  // The subscription as the last settle committed it saves a read per period of a catch-up.
  let known: SubscriptionRow | undefined;
  // Bounded: a step that changes nothing ("again") cannot repeat forever either.
  for (let steps = 0; periods < MAX_PERIODS_PER_RUN && steps < 2 * MAX_PERIODS_PER_RUN; steps += 1) {
    const sub = known ?? (await fresh().em.findOne(Subscription, { id: input.subscriptionId }));
    known = undefined;
    if (!sub || !isDue(sub, ctx.clock.now(), retryNow)) return stop("not_due");

    if (!sub.fundingAsset) throw new Error(`billable subscription ${sub.id} has no funding asset`);
    let plan = plans.get(sub.planId);
    if (!plan) {
      plan = await fetchPlanPricing(ports, sub.merchantId, sub.planId);
      plans.set(plan.id, plan);
    }
    // Quoted for this asset, before the lock (no RPC while a transaction is open); the charge is opened only in this asset.
    const quotedAsset = sub.fundingAsset;
    const fallbacks = [...sub.fallbackAssets];
    // The period's price (discount, credit) is what is quoted: pricing/period-price.ts.
    const price = periodPrice(plan.amount, plan.currency, sub);
    const chosenPlan = plan;
    // With fallbacks, the asset this attempt charges is chosen now, from balances read just before: the row is opened in it and never re-pointed.
    const priced = { ...plan, amount: price.amount };
    const paying = await choosePayingAsset(
      ports,
      priced,
      { walletUserId: sub.walletUserId, fundingAsset: quotedAsset, fallbackAssets: fallbacks },
      await quotePlan(ports, priced, quotedAsset),
    );
    const quote = paying.quote;

    const step = await ctx.em.fork().transactional(async (em) => {
      const locked = await lockSubscription(em, sub.id);
      const now = ctx.clock.now();
      if (!isDue(locked, now, retryNow)) return { kind: "not_due" } as const;
      // A charge in flight (a crash, another worker, a plan change's immediate charge) is finished before anything
      // else: a plan change paid for the current period applies before that period ends and the next is priced.
      const inFlight = await chargeInFlight(em, locked.id);
      if (inFlight) return { kind: "in_flight", chargeId: inFlight.id, renewal: inFlight.purpose === "RENEWAL" } as const;
      await applyDuePlanChange(em, ctx.clock, locked);
      // The plan or the funding asset changed (just now, or since the quote): quote again and start over.
      const lockedPrice = periodPrice(chosenPlan.amount, chosenPlan.currency, locked);
      if (
        locked.planId !== chosenPlan.id ||
        locked.fundingAsset !== quotedAsset ||
        locked.fallbackAssets.join(",") !== fallbacks.join(",") ||
        !sameAmount(lockedPrice, price)
      ) {
        return { kind: "again" } as const;
      }
      const policy = await ports.policies.forMerchant(em, locked.merchantId);

      const cadence = { interval: planInterval(chosenPlan), count: chosenPlan.intervalCount };
      if (anchorFor(locked, cadence)) touch(locked, now);
      const period = duePeriod(locked, cadence);
      const refusal: PeriodFailureReason | undefined = !quote ? "CONVERSION_UNAVAILABLE" : exceedsCap(chosenPlan) ? "MAXIMUM_CHARGE_EXCEEDED" : undefined;
      const charge = await openPeriodCharge(
        em,
        now,
        "RENEWAL",
        locked,
        period,
        chargeTerms(lockedPrice, chosenPlan.currency, paying.asset, quote),
        refusal,
        attemptBudget(policy),
        paying.fundedByFallback,
      );
      if (charge === "budget_used") {
        // The period has had its attempts (the schedule was shortened after this retry was set): dunning ends, nothing is charged.
        if (locked.status !== "PAST_DUE") throw new Error(`subscription ${locked.id} (${locked.status}) has no attempt left for period ${period.index}`);
        await retriesExhausted(em, ctx.clock, policy, locked, now);
        return { kind: "exhausted" } as const;
      }
      // A refusal is settled here: no wallet call, the same outcome path as a declined charge.
      if (refusal) await renewalSettled(em, ctx.clock, policy, locked, charge);
      return { kind: refusal ? "refused" : "opened", charge } as const;
    });

    if (step.kind === "not_due") return stop("not_due");
    if (step.kind === "again") continue;
    if (step.kind === "exhausted") return stop("failed");
    if (step.kind === "in_flight") {
      const settled = await settleCharge(fresh(), ports, step.chargeId, false);
      if (settled.state === "in_progress") return stop("in_progress");
      // A plan change's charge settled: its subscription is read again and the renewal goes on from there.
      if (!step.renewal) continue;
      count(settled.charge);
      periods += 1;
      if (settled.charge.status !== "SUCCEEDED") return stop("failed");
      continue;
    }
    periods += 1;
    retryNow = false;
    if (step.kind === "refused") {
      count(step.charge);
      return stop("failed");
    }
    const settled = await settleCharge(fresh(), ports, step.charge.id, step.charge.leaseGeneration);
    if (settled.state === "in_progress") return stop("in_progress");
    count(settled.charge);
    await enqueueRechecksAfterDebits(fresh(), ports, [settled.charge]);
    if (settled.charge.status !== "SUCCEEDED") return stop("failed");
    known = settled.subscription;
  }
  return stop("limit");
}

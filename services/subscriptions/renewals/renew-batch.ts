import { performance } from "node:perf_hooks";
import { ChargeOutcome } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { Subscription, SubscriptionCharge, type ChargeRow } from "../entities.ts";
import { currentAuthorizations, lockSubscriptionRows } from "../subscription-store.ts";
import { chargeCall, chargeWalletBatch, recordAnswer, type WalletAnswer } from "../charges/settle-charge.ts";
import { fenceOf, recordFailures } from "../../platform/wallet-calls/wallet-call.ts";
import { openLeasedCharges, withinBudget } from "../charges/open-charge.ts";
import { lastNextPeriodAttempts, lockChargeRows, subscriptionsWithChargeInFlight } from "../charges/charge-store.ts";
import { numberReceipts, type ReceiptToNumber } from "../charges/receipt-number.ts";
import { attemptBudget } from "./billing-policy.ts";
import { enqueueRechecksAfterDebits } from "./charge-at-risk.ts";
import { quotePlan, type Quote } from "../funding.ts";
import { periodPrice, pricedRow } from "../pricing/period-price.ts";
import { chargeTerms } from "../pricing/price-terms.ts";
import { fetchPlanPricing, planInterval, type PlanPricing, type SubscriptionPorts } from "../ports.ts";
import { anchorFor, duePeriod } from "./billing-periods.ts";
import { exceedsCap } from "./exceeds-cap.ts";
import { isDue, MAX_PERIODS_PER_RUN, renewSubscription } from "./renew-subscription.ts";
import { touch } from "../../platform/record-version.ts";
import { chargeableSubscriptions, saveBillingAnchor } from "./renewal-store.ts";
import { subscriptionsWithScheduledChange } from "../change-sessions/change-session-store.ts";
import { isOutage } from "../../platform/dependency-outage.ts";
import { trackedRowsWrites, trackRows } from "../../platform/database/tracked-rows.ts";
import { executeWrites } from "../../platform/database/bound-values.ts";
import { collectedEventsInsert, collectEvents, reserveCollectedSeqs } from "../../events/record-event.ts";
import { settledWithout } from "../charge-metrics.ts";

/** Subscriptions one renewal job charges together (the bare-code baseline commits per 100 as well). */
export const RENEWAL_JOB_SIZE = 250;

interface BatchResult {
  paid: number;
  failed: number;
  /** Subscriptions handed to the one-by-one path (renewSubscription): a plan change due, a charge already in flight, a refusal… */
  oneByOne: number;
  /** Of those, how many failed with an error (logged here, each on its own): the rest of the set was renewed all the same. */
  errored: number;
}

/**
 * Renews a set of subscriptions the way renewSubscription renews one, with
 * the same charge protocol (platform/wallet-calls/wallet-call.ts) but each step set-based:
 *  1. one transaction locks the set (in id order) and opens a PENDING,
 *     leased charge for each subscription that is plainly due: the usual
 *     case of a renewal, a trial's first charge or a retry;
 *  2. one ChargeBatch call per merchant moves the money, each charge under
 *     its own idempotency key;
 *  3. one transaction settles the set, fenced per row by its lease
 *     generation, and applies each outcome exactly as a single settle does.
 * The plan's price is read once per plan and the quote made once per (plan,
 * funding asset) per round, before any transaction opens. A subscription
 * with several periods due goes round again (catch-up, oldest period
 * first). Anything that is not plainly due (a plan change due, a charge in
 * flight, no quote, over the cap, a plan that cannot be read) goes through
 * renewSubscription afterwards, one by one: the rare cases keep one code path;
 * one of them that throws is logged and counted in `errored`, and the others
 * still run (a dependency down still fails the whole run).
 * A crash anywhere leaves PENDING leased rows that the stale-charge sweep
 * finishes with the same keys, as for a single renewal.
 */
export async function renewBatch(ctx: UseCaseContext, ports: SubscriptionPorts, subscriptionIds: readonly string[]): Promise<BatchResult> {
  const result: BatchResult = { paid: 0, failed: 0, oneByOne: 0, errored: 0 };
  const oneByOne = new Set<string>();
  let ids = [...new Set(subscriptionIds)];
  for (let round = 0; ids.length > 0 && round < MAX_PERIODS_PER_RUN; round += 1) {
    const terms = await readTerms(ctx, ports, ids, oneByOne);
    const leasesTakenAt = performance.now();
    const opened = await openCharges(ctx, ports, ids, terms, oneByOne);
    if (opened.length === 0) break;
    // An RPC failure counts on each row (back-off) and throws: the rows stay PENDING for the stale-charge sweep.
    const answers = await chargeWalletBatch(ctx.em.fork(), ports, opened, leasesTakenAt).catch(async (err: unknown) => {
      await recordFailures(
        ctx.em.fork(),
        chargeCall(ports),
        opened.map((c) => ({ id: c.id, generation: c.leaseGeneration })),
        err,
      );
      throw err;
    });
    const settled = await settleCharges(ctx, ports, opened, answers);
    // Committed: the accounts debited that also pay an announced charge of another subscription have it assessed again.
    await enqueueRechecksAfterDebits(
      ctx,
      ports,
      opened.map((c) => ({ ...c, status: answers.get(c.id)?.outcome === ChargeOutcome.SUCCEEDED ? "SUCCEEDED" : "FAILED" })),
    );
    result.paid += settled.paid;
    result.failed += settled.failed;
    ids = settled.stillDue;
  }
  for (const id of oneByOne) {
    try {
      const single = await renewSubscription({ em: ctx.em.fork(), clock: ctx.clock }, ports, { subscriptionId: id });
      result.paid += single.paid;
      result.failed += single.failed;
    } catch (err) {
      // A dependency down fails the job: the outage is logged once by the workers and the claims back off.
      if (isOutage(err)) throw err;
      // One bad subscription must not fail its neighbours with it (the job failed and came back with the same set every claim period).
      result.errored += 1;
      ports.logger.error({ err, subscriptionId: id }, "renewal failed; the rest of its set is renewed");
    }
  }
  result.oneByOne = oneByOne.size;
  return result;
}

interface Terms {
  plans: Map<string, PlanPricing>;
  quotes: Map<string, Quote | undefined>;
}

/** One quote per (plan, asset, priced amount): subscriptions with the same discount share it (pricing/period-price.ts). */
const quoteKey = (planId: string, asset: string, priced: string) => `${planId}/${asset}/${priced}`;

/** Plans and quotes for the due subscriptions, read before any transaction: no RPC is made while one is open. */
async function readTerms(ctx: UseCaseContext, ports: SubscriptionPorts, ids: string[], oneByOne: Set<string>): Promise<Terms> {
  // Only what names the terms (the locked rows are checked against them later): no entity to build.
  const subs = await chargeableSubscriptions(ctx.em, ids);
  const plans = new Map<string, PlanPricing>();
  const quotes = new Map<string, Quote | undefined>();
  const unreadable = new Set<string>();
  for (const sub of subs) {
    // A funding fallback needs the balances read before its row is opened (choose-paying-asset.ts): the one-by-one path does it.
    if (sub.has_fallback) oneByOne.add(sub.id);
    if (oneByOne.has(sub.id) || unreadable.has(sub.plan_id)) continue;
    if (!plans.has(sub.plan_id)) {
      try {
        plans.set(sub.plan_id, await fetchPlanPricing(ports, sub.merchant_id, sub.plan_id));
      } catch {
        // Not logged here: the one-by-one path meets the same error and reports it, once per subscription.
        unreadable.add(sub.plan_id);
        continue;
      }
    }
    const plan = plans.get(sub.plan_id)!;
    const priced = periodPrice(plan.amount, plan.currency, pricedRow(sub)).amount;
    const key = quoteKey(sub.plan_id, sub.funding_asset!, priced);
    if (!quotes.has(key)) quotes.set(key, await quotePlan(ports, { amount: priced, currency: plan.currency }, sub.funding_asset!));
  }
  return { plans, quotes };
}

/** Step 1 for the set: one transaction, subscriptions locked in id order, one PENDING leased charge each. */
async function openCharges(ctx: UseCaseContext, ports: SubscriptionPorts, ids: string[], terms: Terms, oneByOne: Set<string>): Promise<ChargeRow[]> {
  return ctx.em.fork().transactional(async (em) => {
    // Plain rows, not entities: the open step reads the billing fields and changes a row only to re-anchor it (rare).
    const subs = await lockSubscriptionRows(em, ids);
    const now = ctx.clock.now();
    const due = subs.filter((s) => isDue(s, now) && !oneByOne.has(s.id));
    if (due.length === 0) return [];
    // A plan change scheduled: applyDuePlanChange may apply it, one by one.
    const scheduled = await subscriptionsWithScheduledChange(
      em,
      due.map((s) => s.id),
    );
    // A charge in flight, whatever it pays for, one by one too: a plan change's immediate charge is settled
    // before the renewal; a period charge left by a crash or another worker is finished there.
    const charging = await subscriptionsWithChargeInFlight(
      em,
      due.map((s) => s.id),
    );
    // The last attempt at each next period so far (openPeriodCharge's, for the set); one in flight is charging's.
    const attempts = await lastNextPeriodAttempts(em, due);
    // One settings query per batch for all its merchants (the settle below then reads them from the process's cache).
    const policies = await ports.policies.load(
      em,
      due.map((s) => s.merchantId),
    );

    const toOpen: Parameters<typeof openLeasedCharges>[2] = [];
    for (const sub of due) {
      const plan = terms.plans.get(sub.planId);
      // Priced from the locked row; a price changed since its quote has no quote here (one by one).
      const price = plan ? periodPrice(plan.amount, plan.currency, sub) : undefined;
      const quote = sub.fundingAsset && price ? terms.quotes.get(quoteKey(sub.planId, sub.fundingAsset, price.amount)) : undefined;
      const attempt = (attempts.get(sub.id)?.last ?? 0) + 1;
      const maxAttempts = attemptBudget(policies.get(sub.merchantId)!);
      // Over its budget (the schedule shrank): the one-by-one path ends dunning without charging (openPeriodCharge).
      if (!plan || !quote || !sub.fundingAsset || scheduled.has(sub.id) || charging.has(sub.id) || exceedsCap(plan) || !withinBudget(attempt, maxAttempts)) {
        oneByOne.add(sub.id);
        continue;
      }
      const cadence = { interval: planInterval(plan), count: plan.intervalCount };
      if (anchorFor(sub, cadence)) {
        touch(sub, now);
        await saveBillingAnchor(em, sub);
      }
      const period = duePeriod(sub, cadence);
      toOpen.push({
        sub,
        period,
        terms: chargeTerms(price!, plan.currency, sub.fundingAsset, quote),
        attempt,
        maxAttempts,
      });
    }
    return openLeasedCharges(em, now, toOpen);
  });
}

/**
 * Step 3 for the set: one transaction, the same lock order as a single settle
 * (subscriptions, then charges, then the receipt counters), fenced per row.
 * The rows are plain, not entities, and written back set-based with the
 * events the settle records (tracked-rows.ts, collectEvents): the outcome of
 * each row is applied by the same code as a single settle's.
 */
async function settleCharges(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  opened: ChargeRow[],
  answers: Map<string, WalletAnswer>,
): Promise<{ paid: number; failed: number; stillDue: string[] }> {
  return ctx.em.fork().transactional(async (em) => {
    const subRows = await lockSubscriptionRows(
      em,
      opened.map((c) => c.subscriptionId),
    );
    // The rows as they are now, locked (after their subscriptions): their generation is the fence.
    const chargeRows = await lockChargeRows(
      em,
      opened.map((c) => c.id),
    );
    const subs = trackRows(em, Subscription, subRows);
    const charges = trackRows(em, SubscriptionCharge, chargeRows);
    const subById = new Map(subRows.map((s) => [s.id, s]));
    const rowById = new Map(chargeRows.map((r) => [r.id, r]));
    collectEvents(em);
    const authorizations = await currentAuthorizations(em, [...subById.keys()]);
    const receipts: ReceiptToNumber[] = [];
    let paid = 0;
    let failed = 0;
    const stillDue: string[] = [];
    const settled: ChargeRow[] = [];
    for (const charge of opened) {
      const row = rowById.get(charge.id)!;
      const sub = subById.get(charge.subscriptionId)!;
      const answer = answers.get(charge.id);
      // No answer: its lease was taken over before its chunk was called; the new holder settles it.
      if (!answer) continue;
      const fence = fenceOf(row, charge.leaseGeneration);
      if (fence !== "held") {
        // Settled or taken over by another holder of the same key: its outcome is the one recorded.
        if (fence === "taken_over")
          ports.logger.warn(
            { chargeId: row.id, held: charge.leaseGeneration, current: row.leaseGeneration },
            "charge settle fenced off: the lease was taken over",
          );
        continue;
      }
      await recordAnswer(em, ctx.clock, ports, sub, row, answer, authorizations.get(sub.id) ?? null, receipts);
      settled.push(row);
      if (answer.outcome === ChargeOutcome.SUCCEEDED) paid += 1;
      else failed += 1;
      if (answer.outcome === ChargeOutcome.SUCCEEDED && isDue(sub, ctx.clock.now())) stillDue.push(sub.id);
      // Done with it: the claim ends in this settle's own row update, whichever sweep took it (a later sweep's claim on a
      // row this settle renews has nothing left to do). The job's release ends the rest: still due, or sent one by one.
      else sub.renewalClaimedUntil = null;
    }
    // Before the receipt counters, which every other settle of a merchant waits for until this commit (receipt-number.ts):
    // the subscriptions, and the events the numbers do not change, each in its place in the events' order (reserved).
    // Under them, only what carries the numbers: the charges and their events, in one statement, then the commit.
    const numbered = new Set<unknown>(receipts.map((r) => r.event));
    await reserveCollectedSeqs(em);
    await executeWrites(em, [...trackedRowsWrites(em, subs), collectedEventsInsert(em, (e) => !numbered.has(e))]);
    await numberReceipts(em, receipts, ports.publicBaseUrl);
    await executeWrites(em, [collectedEventsInsert(em), ...trackedRowsWrites(em, charges)]);
    // Written without the unit of work, whose flushes the charge metrics watch.
    settledWithout(em, settled);
    return { paid, failed, stillDue };
  });
}

import type { PlanInterval } from "../../catalog/entities.ts";
import type { SubscriptionRow } from "../entities.ts";
import { periodEnd } from "../billing-calendar.ts";

/** How often a subscription bills: its plan's interval × intervalCount. */
export interface Cadence {
  interval: PlanInterval;
  count: number;
}

/**
 * When period n starts. Boundaries are counted from the anchor in calendar
 * terms (billing-calendar.ts), never from the previous boundary, so a
 * month-end anchor keeps its day; `anchorPeriodIndex` is the period that
 * starts at the anchor (0 unless a plan change re-anchored).
 */
export function periodStart(sub: SubscriptionRow, cadence: Cadence, n: number): Date {
  if (!sub.billingAnchor) throw new Error(`subscription ${sub.id} has no billing anchor`);
  if (n < sub.anchorPeriodIndex) throw new Error(`period ${n} of subscription ${sub.id} is before its anchor`);
  return periodEnd(sub.billingAnchor, cadence.interval, cadence.count, n - sub.anchorPeriodIndex);
}

/**
 * Makes the anchor fit `cadence` (the current plan's) before the period
 * nextPeriodIndex is billed or skipped. In the usual case the anchor counted
 * in this cadence lands on nextBillingAt and nothing changes, which is what
 * keeps month ends from drifting. When it does not (the plan changed to
 * another cadence, or its change moved the anchor), the anchor moves to
 * nextBillingAt and periods count from there: the paid current period is
 * kept, the next one follows the new cadence, period numbers go on (they key
 * the charges). Call under the row lock. True when the anchor moved (a change of the record: the caller touches it).
 */
export function anchorFor(sub: SubscriptionRow, cadence: Cadence): boolean {
  if (!sub.nextBillingAt) throw new Error(`subscription ${sub.id} has no next billing date`);
  const lands =
    sub.billingAnchor != null &&
    sub.nextPeriodIndex >= sub.anchorPeriodIndex &&
    periodStart(sub, cadence, sub.nextPeriodIndex).getTime() === sub.nextBillingAt.getTime();
  if (!lands) {
    sub.billingAnchor = sub.nextBillingAt;
    sub.anchorPeriodIndex = sub.nextPeriodIndex;
  }
  return !lands;
}

/** The period the next charge pays for: [nextBillingAt, the next anchor date). Call anchorFor first. */
export function duePeriod(sub: SubscriptionRow, cadence: Cadence): { index: number; start: Date; end: Date } {
  const index = sub.nextPeriodIndex;
  return { index, start: periodStart(sub, cadence, index), end: periodStart(sub, cadence, index + 1) };
}

/**
 * The resume rule: the anchor is kept and periods whose billing date passed
 * while the subscription was paused are skipped without charge. The next
 * billing date becomes the first anchor date at or after `now`; the period
 * running at `now` (from the previous anchor date) becomes the current one,
 * unbilled. A subscription resumed before its next billing date is left as it
 * was. Returns how many billing dates were skipped.
 */
export function skipPeriodsMissedWhilePaused(sub: SubscriptionRow, cadence: Cadence, now: Date): number {
  if (!sub.nextBillingAt || sub.nextBillingAt.getTime() >= now.getTime()) return 0;
  anchorFor(sub, cadence);
  let n = sub.nextPeriodIndex;
  while (periodStart(sub, cadence, n).getTime() < now.getTime()) n += 1;
  const skipped = n - sub.nextPeriodIndex;
  sub.currentPeriodStart = periodStart(sub, cadence, n - 1);
  sub.currentPeriodEnd = periodStart(sub, cadence, n);
  sub.nextPeriodIndex = n;
  sub.nextBillingAt = sub.currentPeriodEnd;
  return skipped;
}

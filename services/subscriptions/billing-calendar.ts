import type { PlanInterval } from "../catalog/entities.ts";

/**
 * Billing periods in calendar terms, in UTC. Period n (n ≥ 0) runs from
 * periodEnd(anchor, …, n) to periodEnd(anchor, …, n + 1). Every boundary is
 * computed from the anchor, never from the previous boundary, so a month-end
 * anchor keeps its day: monthly from 31 January gives 28/29 February, then
 * 31 March, 30 April, 31 May…; yearly from 29 February gives 28 February in
 * common years and 29 February again in leap years. The time of day is kept.
 */
export function periodEnd(anchor: Date, interval: PlanInterval, count: number, n: number): Date {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`count must be a positive integer (got ${count})`);
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer (got ${n})`);
  const steps = count * n;
  switch (interval) {
    case "DAY":
      return addUtcDays(anchor, steps);
    case "WEEK":
      return addUtcDays(anchor, 7 * steps);
    case "MONTH":
      return addUtcMonthsClamped(anchor, steps);
    case "YEAR":
      return addUtcMonthsClamped(anchor, 12 * steps);
  }
}

/** Calendar days (UTC has no DST, so a day is always 24 hours). */
function addUtcDays(from: Date, days: number): Date {
  const d = new Date(from.getTime());
  d.setUTCDate(d.getUTCDate() + days);
  return d;
}

/** Adds months keeping the anchor's day, clamped to the last day of a shorter month. */
function addUtcMonthsClamped(from: Date, months: number): Date {
  const totalMonths = from.getUTCFullYear() * 12 + from.getUTCMonth() + months;
  const year = Math.floor(totalMonths / 12);
  const month = totalMonths % 12;
  const day = Math.min(from.getUTCDate(), daysInUtcMonth(year, month));
  return new Date(Date.UTC(year, month, day, from.getUTCHours(), from.getUTCMinutes(), from.getUTCSeconds(), from.getUTCMilliseconds()));
}

function daysInUtcMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/** The trial's end: trialDays calendar days after the approval. */
export function trialEnd(approvedAt: Date, trialDays: number): Date {
  return addUtcDays(approvedAt, trialDays);
}

/**
 * The soak's pass/fail rules as pure functions (unit-tested in rules.test.ts),
 * so what "grows" and "matches" means is written down once and can fail.
 */

/**
 * Which months the memory rule compares. The rule is month 3 against
 * month 12 of a year: a quarter in (warm-up over: caches, pools and JIT
 * filled) against the end. A shorter run scales it: the month at a quarter of
 * the run (at least month 1) against the last month. Null when the run has
 * fewer than two months (nothing to compare).
 */
export function memoryMonths(months: number): { from: number; to: number } | null {
  if (months < 2) return null;
  const from = Math.max(1, Math.round((months * 3) / 12));
  return from < months ? { from, to: months } : null;
}

/** Growth of `to` over `from`, as a fraction (0.05 = 5 %). */
export function growth(from: number, to: number): number {
  if (from <= 0) return to > 0 ? Infinity : 0;
  return (to - from) / from;
}

/**
 * A monthly series "keeps growing" when it rose in each of its last `rises`
 * samples (so the last is its highest) and ended above `floor` (small values
 * go up and down with the day's work: a queue of 3 jobs or a lag of a minute
 * is noise, not a trend). Fewer samples than rises + 1: not judged (false).
 */
export function keepsGrowing(series: readonly number[], floor: number, rises = 3): boolean {
  if (series.length < rises + 1) return false;
  const tail = series.slice(-(rises + 1));
  for (let i = 1; i < tail.length; i++) if (!(tail[i]! > tail[i - 1]!)) return false;
  return tail[tail.length - 1]! > floor;
}

export type Interval = "DAY" | "WEEK" | "MONTH" | "YEAR";

/**
 * Start of billing period n counted from `anchor`, written independently of
 * the service's billing calendar: days add 24 h (UTC), months keep the
 * anchor's day, clamped to a shorter month's last day.
 */
export function periodStartAt(anchor: Date, interval: Interval, count: number, n: number): Date {
  const steps = n * count;
  if (interval === "DAY" || interval === "WEEK") return new Date(anchor.getTime() + steps * (interval === "DAY" ? 1 : 7) * 86_400_000);
  const months = interval === "MONTH" ? steps : 12 * steps;
  const total = anchor.getUTCFullYear() * 12 + anchor.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(
      year,
      month,
      Math.min(anchor.getUTCDate(), lastDay),
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  );
}

/**
 * How many periods a subscription that was never paused, changed or short of
 * money has paid by `now`: one per billing date from its anchor (the first
 * payment at approval, or the trial's end) up to and including `now`.
 */
export function periodsDue(anchor: Date, interval: Interval, count: number, now: Date): number {
  let n = 0;
  while (periodStartAt(anchor, interval, count, n).getTime() <= now.getTime()) n += 1;
  return n;
}

/**
 * When the next attempt is due after `failures` failed attempts in a row, or
 * undefined when the schedule is exhausted (the delivery then fails for good).
 * Jitter (±10 %) spreads the retries of many deliveries that failed together,
 * e.g. during a receiver outage, so they do not return as one burst.
 */
export const RETRY_JITTER = 0.1;

export function nextRetryDelayMs(scheduleMs: readonly number[], failures: number, random: () => number = Math.random): number | undefined {
  const base = scheduleMs[failures - 1];
  if (base === undefined) return undefined;
  return Math.max(1, Math.round(base * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random())));
}

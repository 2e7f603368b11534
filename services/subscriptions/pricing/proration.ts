import { amount, formatAmount, fractionOf, MAX_FRACTION_DIGITS, sub as minus } from "../../platform/money.ts";

/**
 * What a plan change with proration PRORATE comes to, in the plans' one
 * currency: new amount × unused fraction − old amount × unused fraction of the
 * current period, where the unused fraction is counted in whole seconds on
 * the engine's calendar period (billing-calendar.ts: the subscription's
 * currentPeriodStart … currentPeriodEnd), from `now` to the period's end.
 *
 * Rounding: computed exactly, then rounded once to 18 decimals (the storage
 * scale) toward −∞ — in the customer's favour either way: a charge is never
 * rounded up, a credit never rounded down. The asset amount of a positive
 * result is then quoted like every charge (rounded up to the asset's units).
 * A partial second left counts as used (the customer is never charged for a
 * second that has begun). Outside the period (a change at or after its end)
 * nothing is left to prorate: "0".
 *
 * Positive: charged at once (the immediate charge); negative: added to the
 * subscription's creditBalance, spent by the next charges before any money
 * moves (period-price.ts).
 */
export function prorationAmount(oldAmount: string, newAmount: string, periodStart: Date, periodEnd: Date, now: Date): string {
  const totalSeconds = Math.round((periodEnd.getTime() - periodStart.getTime()) / 1000);
  if (totalSeconds <= 0) return "0";
  const unusedSeconds = Math.min(totalSeconds, Math.max(0, Math.floor((periodEnd.getTime() - now.getTime()) / 1000)));
  if (unusedSeconds === 0) return "0";
  const difference = minus(amount(newAmount), amount(oldAmount));
  return formatAmount(fractionOf(difference, unusedSeconds, totalSeconds, MAX_FRACTION_DIGITS, "floor"));
}

/** What PRORATE + IMMEDIATE comes to for this subscription now (a trial is unpaid: nothing to prorate). */
export function prorationFor(
  sub: { status: string; currentPeriodStart: Date | null | undefined; currentPeriodEnd: Date | null | undefined },
  oldAmount: string,
  newAmount: string,
  now: Date,
): string {
  if (sub.status === "TRIALING" || !sub.currentPeriodStart || !sub.currentPeriodEnd) return "0";
  return prorationAmount(oldAmount, newAmount, sub.currentPeriodStart, sub.currentPeriodEnd, now);
}

/** The part of a signed proration the customer pays now ("0" for a credit). */
export const chargedPart = (prorated: string): string => (prorated.startsWith("-") ? "0" : prorated);

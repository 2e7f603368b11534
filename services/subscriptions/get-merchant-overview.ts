import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { amount, formatAmount, sumOfFractions } from "../platform/money.ts";
import { fetchPlanPricing, planInterval, type SubscriptionPorts } from "./ports.ts";
import type { PlanInterval } from "../catalog/entities.ts";
import { countLiveSubscriptionsByPlan } from "./subscription-store.ts";
import { countSettledCharges, dailyChargedVolume } from "./charges/charge-store.ts";

const DEFAULT_OVERVIEW_DAYS = 30;
const MAX_OVERVIEW_DAYS = 90;
const DAY_MS = 86_400_000;

/** Decimals MRR is shown with (one rounding, half-even, after an exact sum). */
const MRR_DECIMALS = 2;

/** Months per interval as numerator / 12: a year is 1/12 of its price a month, a week 52/12, a day 365/12. */
const PER_MONTH_TWELFTHS: Record<PlanInterval, number> = { DAY: 365, WEEK: 52, MONTH: 12, YEAR: 1 };

interface MerchantOverview {
  activeSubscriptions: number;
  pastDueSubscriptions: number;
  trialingSubscriptions: number;
  mrr: { currency: string; amount: string; subscriptions: number }[];
  chargesSucceeded: number;
  chargesFailed: number;
  chargedVolume: { date: string; currency: string; amount: string; charges: number }[];
  windowStart: Date;
  windowEnd: Date;
}

/**
 * The dashboard's Overview of one merchant, in four aggregate statements over
 * the indexes of migration 0033 (none reads a row per subscription or per
 * charge into this process): subscriptions per status and plan, charges of
 * the window per status, and SUCCEEDED charges per UTC day and currency.
 * MRR: the plan amount of each ACTIVE and PAST_DUE subscription normalized to
 * a month (price and cadence never change, so the process's plan cache
 * serves them), summed exactly per plan currency and rounded once.
 */
export async function getMerchantOverview(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  input: { merchantId: string; days?: number | undefined },
): Promise<MerchantOverview> {
  if (!isUuid(input.merchantId)) throw invalid("INVALID_REQUEST", "merchantId: must be a uuid");
  const days = input.days || DEFAULT_OVERVIEW_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_OVERVIEW_DAYS) throw invalid("INVALID_REQUEST", `days: must be between 1 and ${MAX_OVERVIEW_DAYS}`);
  const merchantId = input.merchantId.toLowerCase();
  const windowEnd = ctx.clock.now();
  const windowStart = new Date(windowEnd.getTime() - days * DAY_MS);

  const [counts, charges, volume] = await Promise.all([
    countLiveSubscriptionsByPlan(ctx.em, merchantId),
    countSettledCharges(ctx.em, merchantId, windowStart, windowEnd),
    dailyChargedVolume(ctx.em, merchantId, windowStart, windowEnd),
  ]);

  const countOf = (status: string) => counts.filter((c) => c.status === status).reduce((n, c) => n + Number(c.n), 0);
  const paying = counts.filter((c) => c.status === "ACTIVE" || c.status === "PAST_DUE");
  const planIds = [...new Set(paying.map((c) => c.plan_id))];
  const pricing = new Map((await Promise.all(planIds.map((id) => fetchPlanPricing(ports, merchantId, id)))).map((p) => [p.id, p]));
  const terms = new Map<string, { terms: { value: ReturnType<typeof amount>; numerator: number; denominator: number }[]; subscriptions: number }>();
  for (const c of paying) {
    const plan = pricing.get(c.plan_id)!;
    const entry = terms.get(plan.currency) ?? { terms: [], subscriptions: 0 };
    entry.terms.push({ value: amount(plan.amount), numerator: PER_MONTH_TWELFTHS[planInterval(plan)] * Number(c.n), denominator: 12 * plan.intervalCount });
    entry.subscriptions += Number(c.n);
    terms.set(plan.currency, entry);
  }
  const mrr = [...terms]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, e]) => ({ currency, amount: formatAmount(sumOfFractions(e.terms, MRR_DECIMALS, "half-even")), subscriptions: e.subscriptions }));

  return {
    activeSubscriptions: countOf("ACTIVE"),
    pastDueSubscriptions: countOf("PAST_DUE"),
    trialingSubscriptions: countOf("TRIALING"),
    mrr,
    chargesSucceeded: Number(charges.find((c) => c.status === "SUCCEEDED")?.n ?? 0),
    chargesFailed: Number(charges.find((c) => c.status === "FAILED")?.n ?? 0),
    chargedVolume: everyDay(windowStart, windowEnd, volume),
    windowStart,
    windowEnd,
  };
}

/** Every UTC date of the window for every currency charged in it, oldest first: a chart needs the empty days too. */
function everyDay(start: Date, end: Date, rows: { day: string; currency: string; total: string; n: string }[]) {
  const currencies = [...new Set(rows.map((r) => r.currency))].sort();
  const dates: string[] = [];
  for (let t = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate()); t <= end.getTime(); t += DAY_MS)
    dates.push(new Date(t).toISOString().slice(0, 10));
  const found = new Map(rows.map((r) => [`${r.currency}/${r.day}`, r]));
  return currencies.flatMap((currency) =>
    dates.map((date) => {
      const row = found.get(`${currency}/${date}`);
      return { date, currency, amount: row ? formatAmount(row.total) : "0", charges: row ? Number(row.n) : 0 };
    }),
  );
}

import { amount, formatAmount, MAX_FRACTION_DIGITS, min, percentOfRounded, sub as minus, zero } from "../../platform/money.ts";
import type { SubscriptionRow } from "../entities.ts";

/**
 * The price of one charge of a subscription, in the plan's currency: the one
 * place that turns a plan amount into what is charged, called by the first
 * payment, the single renewal and the batch renewal alike (and a plan
 * change's prorated charge), so a discount and a credit apply identically
 * everywhere.
 *
 *   amount = subtotal − discountAmount − creditApplied, never below 0
 *
 * Rounding (docs/merchant-api.md, "Pricing"): exact at 18 decimals (the storage scale), and
 * every rounding is in the customer's favour: a percent discount is rounded
 * up. The asset amount is then quoted from `amount` (rounded up to the
 * asset's units, as every charge is).
 *
 * Pure: it reads the discount and credit from the subscription row the caller
 * holds (locked, when a charge is opened); consumePrice (price-consumed.ts)
 * moves them on when the charge succeeds.
 */
export interface PeriodPrice {
  subtotal: string;
  discountAmount: string;
  creditApplied: string;
  amount: string;
  /** The coupon whose discount this price used (its periods count down when the charge succeeds). */
  couponId: string | null;
}

type PricedSubscription = Pick<
  SubscriptionRow,
  "discountCouponId" | "discountPercentOff" | "discountAmountOff" | "discountCurrency" | "creditBalance" | "creditCurrency"
>;

export function periodPrice(subtotal: string, currency: string, sub: PricedSubscription): PeriodPrice {
  const base = amount(subtotal);
  let discount = zero();
  if (sub.discountCouponId) {
    if (sub.discountPercentOff != null) discount = percentOfRounded(base, sub.discountPercentOff, MAX_FRACTION_DIGITS, "up");
    // An amount off applies only in its own currency (a plan change to another currency suspends it).
    else if (sub.discountAmountOff != null && sub.discountCurrency === currency) discount = amount(sub.discountAmountOff);
    discount = min(discount, base);
  }
  const afterDiscount = minus(base, discount);
  const credit = sub.creditCurrency === currency && sub.creditBalance != null ? min(amount(sub.creditBalance), afterDiscount) : zero();
  return {
    subtotal: formatAmount(base),
    discountAmount: formatAmount(discount),
    creditApplied: formatAmount(credit),
    amount: formatAmount(minus(afterDiscount, credit)),
    couponId: sub.discountCouponId ?? null,
  };
}

/** Two prices that charge the same (a quote made for one is valid for the other). */
export const sameAmount = (a: PeriodPrice, b: PeriodPrice): boolean => a.amount === b.amount;

/** The columns a price reads, for set-based reads of plain rows (the batch renewal's one statement for its set). */
export const PRICED_COLUMNS =
  "discount_coupon_id, discount_percent_off::text as discount_percent_off, discount_amount_off::text as discount_amount_off, discount_currency, credit_balance::text as credit_balance, credit_currency";

/** A plain row read with PRICED_COLUMNS as what periodPrice reads. */
export function pricedRow(row: Record<string, unknown>): PricedSubscription {
  return {
    discountCouponId: (row.discount_coupon_id as string | null) ?? null,
    discountPercentOff: (row.discount_percent_off as string | null) ?? null,
    discountAmountOff: (row.discount_amount_off as string | null) ?? null,
    discountCurrency: (row.discount_currency as string | null) ?? null,
    creditBalance: (row.credit_balance as string | null) ?? "0",
    creditCurrency: (row.credit_currency as string | null) ?? null,
  };
}

import type { PeriodChargeTerms } from "../charges/open-charge.ts";
import type { Quote } from "../funding.ts";
import type { PeriodPrice } from "./period-price.ts";

/** A charge's terms from its price (period-price.ts) and the quote made for the price's amount. */
export function chargeTerms(price: PeriodPrice, currency: string, asset: string, quote: Quote | undefined): PeriodChargeTerms {
  return {
    amount: price.amount,
    subtotal: price.subtotal,
    discountAmount: price.discountAmount,
    creditApplied: price.creditApplied,
    couponId: price.couponId,
    currency,
    asset,
    assetAmount: quote?.assetAmount ?? null,
    rate: quote?.rate ?? null,
    rateAt: quote?.rateAt ?? null,
  };
}

import { add, amount, formatAmount, isNegative, negate } from "../../platform/money.ts";
import type { SubscriptionRow } from "../entities.ts";

/**
 * A negative proration (a downgrade mid-period) becomes credit on the
 * subscription, in the plans' currency, under the subscription lock in the
 * transaction that switches the plan; the next charges spend it before any
 * money moves (period-price.ts). Returns the signed amount recorded on the session.
 */
export function creditProration(sub: SubscriptionRow, prorated: string, currency: string): string {
  const value = amount(prorated);
  if (!isNegative(value)) return formatAmount(value);
  sub.creditBalance = formatAmount(add(amount(sub.creditBalance ?? "0"), negate(value)));
  sub.creditCurrency = currency;
  return formatAmount(value);
}

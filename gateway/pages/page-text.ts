import { formatForPeople, MAX_INTEGER_DIGITS } from "../../services/platform/money.ts";

/**
 * The words and numbers the hosted pages show a customer: one rule for
 * amounts, one for times, and a sentence for every status or reason code
 * (a customer never reads `CUSTOMER_CANCELLED`). Codes stay in the markup
 * as data attributes for automation; the text is for people.
 * Lookups are Maps, so a code such as `constructor` finds nothing.
 */

/**
 * Every amount on a page: "19.90 USD", "19.90 USDT_TRON", "0.00166667 BTC",
 * "1,250.00 EUR" (see formatForPeople). An amount that does not parse (never
 * sent by the services) is shown as it came rather than failing the page.
 */
export function amountText(amount: string, code: string): string {
  try {
    return `${formatForPeople(amount)} ${code}`;
  } catch {
    return `${amount} ${code}`;
  }
}

export function formatUtc(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

const UNIT = new Map<string, [string, string]>([
  ["DAY", ["day", "days"]],
  ["WEEK", ["week", "weeks"]],
  ["MONTH", ["month", "months"]],
  ["YEAR", ["year", "years"]],
]);

/** "month", "3 months". */
export function every(interval: string, count: number): string {
  const [one, many] = UNIT.get(interval) ?? [interval.toLowerCase(), interval.toLowerCase()];
  return count === 1 ? one : `${count} ${many}`;
}

/** A code nobody wrote a sentence for yet still reads as words ("SOME_NEW_CODE" → "Some new code"). */
const asWords = (code: string) => {
  const words = code.toLowerCase().replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
};

const SUBSCRIPTION_STATUS = new Map<string, string>([
  ["PENDING_APPROVAL", "Waiting for your approval"],
  ["ACTIVE", "Active"],
  ["TRIALING", "Free trial"],
  ["PAUSED", "Paused"],
  ["PAST_DUE", "Payment overdue"],
  ["UNPAID", "Unpaid: no more charges"],
  ["CANCELLED", "Cancelled"],
  ["EXPIRED", "Expired: never approved"],
]);

export const subscriptionStatusText = (status: string): string => SUBSCRIPTION_STATUS.get(status) ?? asWords(status);

/** Who or what ended a subscription, after its date: "by you", "by Acme Streaming". */
export function cancellationText(reason: string, merchantName: string): string | undefined {
  switch (reason) {
    case "CUSTOMER_CANCELLED":
      return "by you";
    case "MERCHANT_CANCELLED":
      return `by ${merchantName}`;
    case "AUTHORIZATION_DECLINED":
      return "you declined it";
    case "PAYMENT_FAILED":
      return "after payments failed";
    default:
      return reason ? asWords(reason).toLowerCase() : undefined;
  }
}

const CHARGE_STATUS = new Map<string, string>([
  ["PENDING", "Processing"],
  ["SUCCEEDED", "Paid"],
  ["FAILED", "Failed"],
]);

const FAILURE_REASON = new Map<string, string>([
  ["INSUFFICIENT_FUNDS", "balance too low"],
  ["ACCOUNT_FROZEN", "account frozen"],
  ["MAXIMUM_CHARGE_EXCEEDED", "above the maximum per charge"],
  ["CONVERSION_UNAVAILABLE", "no exchange rate for the asset"],
]);

/** "Paid", "Failed: balance too low". */
export function chargeStatusText(status: string, failureReason?: string): string {
  const text = CHARGE_STATUS.get(status) ?? asWords(status);
  if (!failureReason) return text;
  return `${text}: ${FAILURE_REASON.get(failureReason) ?? asWords(failureReason).toLowerCase()}`;
}

/** An asset that cannot hold a price once converted (ASSET_AMOUNT_TOO_LARGE), in words, with the limit. */
export function tooLargeSentence(postedAsset: string): string {
  const limit = `1${"0".repeat(MAX_INTEGER_DIGITS)}`.replace(/\B(?=(\d{3})+$)/g, ",");
  // The asset comes from the form: named only when it looks like an asset code.
  const asset = /^[A-Z0-9_]{1,16}$/.test(postedAsset) ? postedAsset : undefined;
  return asset
    ? `Paid in ${asset}, this price would be more than one payment can hold (it must be less than ${limit} ${asset}). Choose another asset.`
    : `Paid in this asset, this price would be more than one payment can hold (it must be less than ${limit}). Choose another asset.`;
}

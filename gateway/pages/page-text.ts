import { formatForPeople, MAX_INTEGER_DIGITS } from "../../services/platform/money.ts";

/** The words and numbers the hosted pages show a customer: one rule for amounts, one for times. */

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

/** An asset that cannot hold a price once converted (ASSET_AMOUNT_TOO_LARGE), in words, with the limit. */
export function tooLargeSentence(postedAsset: string): string {
  const limit = `1${"0".repeat(MAX_INTEGER_DIGITS)}`.replace(/\B(?=(\d{3})+$)/g, ",");
  // The asset comes from the form: named only when it looks like an asset code.
  const asset = /^[A-Z0-9_]{1,16}$/.test(postedAsset) ? postedAsset : undefined;
  return asset
    ? `Paid in ${asset}, this price would be more than one payment can hold (it must be less than ${limit} ${asset}). Choose another asset.`
    : `Paid in this asset, this price would be more than one payment can hold (it must be less than ${limit}). Choose another asset.`;
}

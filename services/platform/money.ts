import { Decimal as DecimalJs } from "decimal.js";

/**
 * The only module that does arithmetic on amounts. Amounts travel as decimal
 * strings and are stored as Postgres `numeric`; here they are decimal.js values
 * with enough precision that no operation we do ever rounds implicitly.
 * Rounding happens only where a function says so, toward the payer's favour
 * being never assumed: callers pick the mode.
 */
const D = DecimalJs.clone({ precision: 80, rounding: DecimalJs.ROUND_HALF_EVEN, toExpNeg: -100, toExpPos: 100 });
type Decimal = InstanceType<typeof D>;

export type Amount = Decimal;

/** Storage bound: numeric(38,18) leaves 20 integer digits. */
export const MAX_INTEGER_DIGITS = 20;
export const MAX_FRACTION_DIGITS = 18;

const AMOUNT_PATTERN = /^\d+(\.\d{1,18})?$/;

export class InvalidAmountError extends Error {}

/** Parses a wire amount (the spec's pattern). Throws InvalidAmountError with a reason. */
export function parseAmount(text: string): Amount {
  if (!AMOUNT_PATTERN.test(text)) throw new InvalidAmountError("must be a non-negative decimal with at most 18 fraction digits");
  const value = new D(text);
  if (!fitsStorage(value)) throw new InvalidAmountError(`must be less than 10^${MAX_INTEGER_DIGITS}`);
  return value;
}

/** True when the amount's integer part fits the numeric(38,18) columns. */
export function fitsStorage(value: Amount): boolean {
  return value.abs().lt(new D(10).pow(MAX_INTEGER_DIGITS));
}

/** The largest amount that still fits storage once rounded up to a whole unit: 10^20 − 1. */
export const MAX_WHOLE_AMOUNT = "9".repeat(MAX_INTEGER_DIGITS);

/**
 * True when the amount still fits storage after rounding up to any number of
 * decimals (a charge rounds a price up to the paying asset's smallest unit,
 * so 99999999999999999999.5 becomes 10^20 in an asset with fewer decimals).
 */
export function fitsStorageRoundedUp(value: Amount): boolean {
  return fitsStorage(value.toDecimalPlaces(0, DecimalJs.ROUND_UP));
}

/** True when a pattern-valid text also fits storage (used by request validation). */
export function isStorableAmountText(text: string): boolean {
  return AMOUNT_PATTERN.test(text) && fitsStorage(new D(text));
}

/** For validators that report the pattern separately: only pattern-valid text can be too large. */
export function exceedsStorage(text: string): boolean {
  return AMOUNT_PATTERN.test(text) && !fitsStorage(new D(text));
}

export function amount(value: string | Amount): Amount {
  return typeof value === "string" ? new D(value) : value;
}

/**
 * Canonical wire form: plain notation, no exponent, no trailing fraction zeros,
 * no leading zeros ("10.50" and "10.5" → "10.5"; "0010" → "10").
 */
export function formatAmount(value: string | Amount): string {
  const d = amount(value);
  return d.isZero() ? "0" : d.toFixed();
}

/**
 * For people (the hosted pages): the exact amount, never rounded, with at
 * least two decimals, trailing zeros past those trimmed and the whole part
 * grouped by thousands: "19.9" → "19.90", "1250" → "1,250.00",
 * "0.001666670" → "0.00166667". One rule for every currency and asset, so a
 * price and what an asset paid for it read alike on one page.
 */
export function formatForPeople(value: string | Amount): string {
  const [whole = "0", fraction = ""] = formatAmount(value).split(".");
  return `${whole.replace(/\B(?=(\d{3})+$)/g, ",")}.${fraction.padEnd(2, "0")}`;
}

/** Fixed-scale form, e.g. an asset amount at the asset's decimals ("1.500000"). */
export function formatAtScale(value: string | Amount, decimals: number): string {
  return amount(value).toFixed(decimals);
}

export const zero = (): Amount => new D(0);
export const add = (a: Amount, b: Amount): Amount => a.plus(b);
export const sub = (a: Amount, b: Amount): Amount => a.minus(b);
export const compare = (a: Amount, b: Amount): -1 | 0 | 1 => a.comparedTo(b) as -1 | 0 | 1;
export const isZero = (a: Amount): boolean => a.isZero();
export const isNegative = (a: Amount): boolean => a.isNegative() && !a.isZero();
export const equals = (a: string | Amount, b: string | Amount): boolean => amount(a).eq(amount(b));

/** "up"/"down" round away from / toward zero; "floor" toward −∞ (a signed proration: a smaller charge, a larger credit). */
export type RoundingMode = "up" | "down" | "half-even" | "floor";
const MODES: Record<RoundingMode, DecimalJs.Rounding> = {
  up: DecimalJs.ROUND_UP,
  down: DecimalJs.ROUND_DOWN,
  "half-even": DecimalJs.ROUND_HALF_EVEN,
  floor: DecimalJs.ROUND_FLOOR,
};

/** Multiplies by a rate and rounds to `decimals` places with an explicit mode. */
export function convert(value: Amount, rate: string | Amount, decimals: number, mode: RoundingMode): Amount {
  return value.times(amount(rate)).toDecimalPlaces(decimals, MODES[mode]);
}

/** Divides by a rate and rounds to `decimals` places with an explicit mode. */
export function convertInverse(value: Amount, rate: string | Amount, decimals: number, mode: RoundingMode): Amount {
  return value.dividedBy(amount(rate)).toDecimalPlaces(decimals, MODES[mode]);
}

export function roundTo(value: Amount, decimals: number, mode: RoundingMode): Amount {
  return value.toDecimalPlaces(decimals, MODES[mode]);
}

/** value × percent / 100, rounded down (used for tolerances). */
export function percentOf(value: Amount, percent: string | Amount, decimals: number): Amount {
  return value.times(amount(percent)).dividedBy(100).toDecimalPlaces(decimals, DecimalJs.ROUND_DOWN);
}

export const min = (a: Amount, b: Amount): Amount => (a.lte(b) ? a : b);
export const max = (a: Amount, b: Amount): Amount => (a.gte(b) ? a : b);
export const negate = (a: Amount): Amount => a.negated();

/** value × percent / 100, rounded to `decimals` places with an explicit mode (coupons' percentOff). */
export function percentOfRounded(value: Amount, percent: string | Amount, decimals: number, mode: RoundingMode): Amount {
  return value.times(amount(percent)).dividedBy(100).toDecimalPlaces(decimals, MODES[mode]);
}

/** value × numerator / denominator (whole numbers, e.g. seconds of a period), rounded to `decimals` places with an explicit mode. */
export function fractionOf(value: Amount, numerator: number, denominator: number, decimals: number, mode: RoundingMode): Amount {
  if (!Number.isSafeInteger(numerator) || !Number.isSafeInteger(denominator) || denominator <= 0)
    throw new RangeError("fractionOf needs whole numbers and a positive denominator");
  return value.times(numerator).dividedBy(denominator).toDecimalPlaces(decimals, MODES[mode]);
}

/** Number of fraction digits actually used (after removing trailing zeros). */
export function fractionDigits(value: Amount): number {
  return value.decimalPlaces();
}

/**
 * Σ valueᵢ × numeratorᵢ / denominatorᵢ (whole-number factors), rounded once
 * to `decimals`: terms of one denominator are summed exactly and divided
 * once, so the only rounding is the one asked for (e.g. monthly-normalized
 * recurring revenue: a yearly price × 1/12, a weekly one × 52/12).
 */
export function sumOfFractions(terms: readonly { value: Amount; numerator: number; denominator: number }[], decimals: number, mode: RoundingMode): Amount {
  const byDenominator = new Map<number, Amount>();
  for (const t of terms) {
    if (!Number.isSafeInteger(t.numerator) || !Number.isSafeInteger(t.denominator) || t.denominator <= 0)
      throw new RangeError("sumOfFractions needs whole numbers and positive denominators");
    byDenominator.set(t.denominator, (byDenominator.get(t.denominator) ?? zero()).plus(t.value.times(t.numerator)));
  }
  let total = zero();
  for (const [denominator, sum] of byDenominator) total = total.plus(sum.dividedBy(denominator));
  return total.toDecimalPlaces(decimals, MODES[mode]);
}

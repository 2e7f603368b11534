import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { isCurrency } from "../platform/currencies.ts";
import { amount, convert, convertInverse, formatAmount, roundTo, type RoundingMode } from "../platform/money.ts";
import { parseAmountField } from "../platform/amount-input.ts";
import type { RateSource } from "./rates.ts";
import { requireAsset } from "./wallet-input.ts";

interface QuoteInput {
  amount: string;
  currency: string;
  asset: string;
  /** "up" for charges (the merchant is never short-changed), "down" for payouts, "half-even" (default) otherwise. */
  rounding?: string | undefined;
}

interface QuoteResult {
  /** Exact at the asset's decimals, canonical form. */
  assetAmount: string;
  /** Asset units per currency unit, rounded half-even to RATE_DECIMALS (informative: assetAmount uses the exact cross rate). */
  rate: string;
  rateAt: Date;
}

const RATE_DECIMALS = 18;
const ROUNDINGS: readonly RoundingMode[] = ["up", "down", "half-even"];
/** Exact for the intermediate USD value: amounts have ≤ 18 fraction digits and prices far fewer. */
const INTERMEDIATE_DECIMALS = 40;

/**
 * Currency amount → asset amount. Both sides are priced in USD; the asset
 * amount is amount × usd(currency) / usd(asset's currency), rounded ONCE to the
 * asset's decimals in the requested direction. A stablecoin quoted in its own
 * currency is 1:1 (only rounding to its decimals applies).
 */
export async function quote(ctx: UseCaseContext, rates: RateSource, input: QuoteInput): Promise<QuoteResult> {
  const value = parseAmountField("amount", input.amount);
  if (!isCurrency(input.currency)) throw invalid("INVALID_REQUEST", `currency: ${input.currency} is not a supported currency`);
  const asset = requireAsset(input.asset);
  const rounding = (input.rounding || "half-even") as RoundingMode;
  if (!ROUNDINGS.includes(rounding)) throw invalid("INVALID_REQUEST", `rounding: must be one of ${ROUNDINGS.join(", ")}`);

  const now = ctx.clock.now();
  if (input.currency === asset.currency) {
    return { assetAmount: formatAmount(roundTo(value, asset.decimals, rounding)), rate: "1", rateAt: now };
  }
  const [from, to] = await Promise.all([rates.usdPrice(input.currency, now), rates.usdPrice(asset.currency, now)]);
  const usdValue = convert(value, from.usd, INTERMEDIATE_DECIMALS, "half-even");
  const assetAmount = convertInverse(usdValue, to.usd, asset.decimals, rounding);
  const rate = convertInverse(amount(from.usd), to.usd, RATE_DECIMALS, "half-even");
  // The older of the two observations is when the cross rate was last true.
  const rateAt = from.at.getTime() <= to.at.getTime() ? from.at : to.at;
  return { assetAmount: formatAmount(assetAmount), rate: formatAmount(rate), rateAt };
}

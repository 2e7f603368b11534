import { Code, ConnectError } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Plan } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import type { Asset } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { invalid } from "../platform/errors.ts";
import { amount, compare, fitsStorage, formatAmount, MAX_INTEGER_DIGITS } from "../platform/money.ts";
import type { SubscriptionPorts } from "./ports.ts";

export interface Quote {
  assetAmount: string;
  rate: string;
  /** When the rate was observed (receipts show it). */
  rateAt?: Date | undefined;
}

/**
 * What a price costs in one asset: a quote; "unavailable" when the wallet
 * cannot convert the price's currency into the asset; "too_large" when the
 * converted amount is more than a charge can hold (numeric(38,18): less than
 * 10^20), so that asset can never pay that price.
 */
type FundingQuote = { kind: "quote"; quote: Quote } | { kind: "unavailable" } | { kind: "too_large"; assetAmount: string };

/**
 * The price in an asset, rounded up (the payer never pays less than the price).
 * An amount too large for a charge is an answer, not a database error later:
 * every caller treats it as "this asset cannot pay this price".
 */
export async function quoteFunding(ports: SubscriptionPorts, price: Pick<Plan, "amount" | "currency">, asset: string): Promise<FundingQuote> {
  let res;
  try {
    res = await ports.wallet.quote({ amount: price.amount, currency: price.currency, asset, rounding: "up" });
  } catch (err) {
    if (err instanceof ConnectError && [Code.InvalidArgument, Code.FailedPrecondition, Code.NotFound, Code.Unimplemented].includes(err.code)) {
      return { kind: "unavailable" };
    }
    throw err;
  }
  if (!fitsStorage(amount(res.assetAmount))) return { kind: "too_large", assetAmount: res.assetAmount };
  return { kind: "quote", quote: { assetAmount: res.assetAmount, rate: res.rate, rateAt: res.rateAt ? timestampDate(res.rateAt) : undefined } };
}

/**
 * The plan amount in an asset, rounded up. Undefined when that asset cannot
 * fund the subscription: the wallet cannot convert the plan's currency into
 * it, or the converted amount is more than a charge can hold (renewals then
 * fail the period as CONVERSION_UNAVAILABLE; funding option lists leave it out).
 */
export async function quotePlan(ports: SubscriptionPorts, plan: Pick<Plan, "amount" | "currency">, asset: string): Promise<Quote | undefined> {
  const priced = await quoteFunding(ports, plan, asset);
  return priced.kind === "quote" ? priced.quote : undefined;
}

/**
 * The most an authorization's maximum per charge (in the plan's currency)
 * allows in an asset: converted at the wallet's quote and rounded down, so a
 * charge in that asset is within the maximum when its amount is at most
 * this. Undefined when the wallet cannot convert it.
 */
export async function quoteCapInAsset(ports: SubscriptionPorts, cap: Pick<Plan, "amount" | "currency">, asset: string): Promise<string | undefined> {
  try {
    const res = await ports.wallet.quote({ amount: cap.amount, currency: cap.currency, asset, rounding: "down" });
    return res.assetAmount;
  } catch (err) {
    if (err instanceof ConnectError && [Code.InvalidArgument, Code.FailedPrecondition, Code.NotFound, Code.Unimplemented].includes(err.code)) return undefined;
    throw err;
  }
}

/** Why an asset cannot pay a price that converts to `assetAmount` in it, naming the limit ("… less than 10^20 USDT_TRON"). */
export function tooLargeForAsset(price: Pick<Plan, "amount" | "currency">, asset: string, assetAmount: string): string {
  return `${formatAmount(price.amount)} ${price.currency} is ${formatAmount(assetAmount)} ${asset}, more than one charge can hold (less than 10^${MAX_INTEGER_DIGITS} ${asset})`;
}

/** The registry entry of an asset a subscription may be funded with, or 400 FUNDING_ASSET_NOT_SUPPORTED. */
export async function requireFundingAsset(ports: SubscriptionPorts, code: string): Promise<Asset> {
  const { assets } = await ports.wallet.listAssets({});
  const asset = assets.find((a) => a.code === code);
  if (!asset) throw invalid("FUNDING_ASSET_NOT_SUPPORTED", `fundingAsset: ${code} is not an asset of the wallet`);
  return asset;
}

/**
 * One funding option as the hosted page shows it: an account of the customer,
 * what the approval would take from it, and whether its balance covers that.
 */
export function fundingOption(
  asset: { code: string; name: string; network: string; currency: string },
  account: { balance: string; frozen: boolean },
  quote: { assetAmount: string; rate: string },
) {
  return {
    asset: asset.code,
    name: asset.name,
    network: asset.network,
    currency: asset.currency,
    balance: account.balance,
    amountDue: quote.assetAmount,
    rate: quote.rate,
    frozen: account.frozen,
    sufficient: !account.frozen && compare(amount(account.balance), amount(quote.assetAmount)) >= 0,
  };
}

import { amount, compare } from "../../platform/money.ts";
import { quotePlan, quoteCapInAsset, type Quote } from "../funding.ts";
import type { PlanPricing, SubscriptionPorts } from "../ports.ts";
import { exceedsCap } from "./exceeds-cap.ts";
import { balanceIn, covers, readWalletSnapshot, type WalletSnapshot } from "./funding-balance.ts";

/** The asset one attempt charges, at its own quote; `fundedByFallback` when it is not the funding asset. */
interface PayingAsset {
  asset: string;
  quote: Quote | undefined;
  fundedByFallback: boolean;
}

/**
 * Which asset an attempt charges, chosen before its row is opened (the row is
 * keyed by its id, and a wallet call made under that key must never be
 * re-pointed to another asset: wallet-call.ts). Without fallbacks: the
 * funding asset, no extra RPC. With fallbacks, from the balances read now (one
 * wallet call): the funding asset when it covers its amount or nothing
 * else does (the attempt then fails with the funding asset's own reason);
 * otherwise the first fallback, in the customer's order, whose account is
 * usable, whose balance covers the plan at that asset's own quote, and whose
 * amount is within the authorized maximum per charge converted at the same
 * quote (rounded down). The funding asset itself never changes.
 */
export async function choosePayingAsset(
  ports: SubscriptionPorts,
  plan: PlanPricing,
  sub: { walletUserId: string; fundingAsset: string; fallbackAssets: readonly string[] },
  primaryQuote: Quote | undefined,
  /** The wallet user's accounts when the caller has just read them (assessCoverage): no second read. */
  snapshot?: WalletSnapshot,
): Promise<PayingAsset> {
  const primary: PayingAsset = { asset: sub.fundingAsset, quote: primaryQuote, fundedByFallback: false };
  // No quote (CONVERSION_UNAVAILABLE) or over the cap: not a matter of funds, the attempt fails as it always has.
  if (sub.fallbackAssets.length === 0 || !primaryQuote || exceedsCap(plan)) return primary;
  const wallet = snapshot ?? (await readWalletSnapshot(ports, sub.walletUserId));
  if (covers(balanceIn(wallet, sub.fundingAsset), primaryQuote.assetAmount)) return primary;
  for (const asset of sub.fallbackAssets) {
    if (asset === sub.fundingAsset) continue;
    const quote = await quotePlan(ports, plan, asset);
    if (!quote || !covers(balanceIn(wallet, asset), quote.assetAmount)) continue;
    if (!(await withinCap(ports, plan, asset, quote))) continue;
    return { asset, quote, fundedByFallback: true };
  }
  return primary;
}

/** The fallback's amount is within maximumChargeAmount (plan currency) converted into that asset, rounded down. No maximum: within. */
async function withinCap(ports: SubscriptionPorts, plan: PlanPricing, asset: string, quote: Quote): Promise<boolean> {
  if (plan.maximumChargeAmount === undefined || plan.maximumChargeAmount === "") return true;
  const cap = await quoteCapInAsset(ports, { amount: plan.maximumChargeAmount, currency: plan.currency }, asset);
  return cap !== undefined && compare(amount(quote.assetAmount), amount(cap)) <= 0;
}

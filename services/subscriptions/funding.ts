import { Code, ConnectError } from "@connectrpc/connect";
import type { Plan } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import type { Asset } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { invalid } from "../platform/errors.ts";
import { amount, compare } from "../platform/money.ts";
import type { SubscriptionPorts } from "./ports.ts";

export interface Quote {
  assetAmount: string;
  rate: string;
}

/**
 * The plan amount in an asset, rounded up (the payer never pays less than the
 * price). Undefined when the wallet cannot convert the plan's currency into
 * that asset: such an asset cannot fund the subscription.
 */
export async function quotePlan(ports: SubscriptionPorts, plan: Pick<Plan, "amount" | "currency">, asset: string): Promise<Quote | undefined> {
  try {
    const res = await ports.wallet.quote({ amount: plan.amount, currency: plan.currency, asset, rounding: "up" });
    return { assetAmount: res.assetAmount, rate: res.rate };
  } catch (err) {
    if (err instanceof ConnectError && [Code.InvalidArgument, Code.FailedPrecondition, Code.NotFound, Code.Unimplemented].includes(err.code)) {
      return undefined;
    }
    throw err;
  }
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

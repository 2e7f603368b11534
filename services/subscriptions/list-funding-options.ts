import { OwnerType } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { Plan } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import type { UseCaseContext } from "../platform/use-case.ts";
import { DomainError } from "../platform/errors.ts";
import { findByToken } from "./authorization-lookup.ts";
import { fetchPlan, type SubscriptionPorts } from "./ports.ts";
import { fundingOption, quotePlan } from "./funding.ts";
import { periodPrice } from "./pricing/period-price.ts";

export interface FundingOption {
  asset: string;
  name: string;
  network: string;
  currency: string;
  balance: string;
  amountDue: string;
  rate: string;
  sufficient: boolean;
  frozen: boolean;
}

/**
 * The customer's wallet accounts that can pay the plan: the asset settles in
 * the plan's currency or the wallet can convert to it. Each with its balance
 * and what the plan amount costs in it now, so the page can show both.
 */
export async function listFundingOptions(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  input: { token: string; walletUserId: string },
): Promise<FundingOption[]> {
  const { subscription } = await findByToken(ctx.em, input.token);
  if (subscription.walletUserId !== input.walletUserId) {
    throw new DomainError("failed_precondition", "WALLET_USER_MISMATCH", "this subscription must be approved by the wallet user it names");
  }
  const plan = await fetchPlan(ports, subscription.merchantId, subscription.planId);
  // What the customer pays now (or at the first charge after a trial) is the discounted price: each option is quoted for it.
  const price = periodPrice(plan.amount, plan.currency, subscription);
  return fundingOptionsForPlan(ports, { ...plan, amount: price.amount }, input.walletUserId);
}

/** The wallet user's accounts that can pay `plan`, same-currency assets first (also the self-service page's choices). */
export async function fundingOptionsForPlan(ports: SubscriptionPorts, plan: Plan, walletUserId: string): Promise<FundingOption[]> {
  return fundingOptionsFrom(ports, plan, await walletHoldings(ports, walletUserId));
}

export interface WalletHoldings {
  accounts: { asset: string; balance: string; frozen: boolean }[];
  assets: { code: string; name: string; network: string; currency: string }[];
}

/** The customer's accounts and the asset registry: read once per page, however many plans it shows. */
export async function walletHoldings(ports: SubscriptionPorts, walletUserId: string): Promise<WalletHoldings> {
  const [{ accounts }, { assets }] = await Promise.all([
    ports.wallet.listAccounts({ ownerType: OwnerType.WALLET_USER, ownerId: walletUserId }),
    ports.wallet.listAssets({}),
  ]);
  return { accounts, assets };
}

/** The options for one plan from holdings already read: one quote per account. */
export async function fundingOptionsFrom(ports: SubscriptionPorts, plan: Plan, holdings: WalletHoldings): Promise<FundingOption[]> {
  const { accounts, assets } = holdings;
  const options = await Promise.all(
    accounts.map(async (account): Promise<FundingOption | undefined> => {
      const asset = assets.find((a) => a.code === account.asset);
      if (!asset) return undefined;
      const quote = await quotePlan(ports, plan, asset.code);
      if (!quote) return undefined;
      return fundingOption(asset, account, quote);
    }),
  );
  // Same-currency assets first (no conversion), then by code: a stable order for the page.
  return options
    .filter((o): o is FundingOption => o !== undefined)
    .sort((a, b) => Number(b.currency === plan.currency) - Number(a.currency === plan.currency) || a.asset.localeCompare(b.asset));
}

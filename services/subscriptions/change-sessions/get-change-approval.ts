import { OwnerType } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { Plan } from "../../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { DomainError } from "../../platform/errors.ts";
import { amount, formatAmount, isZero } from "../../platform/money.ts";
import type { SubscriptionRow } from "../entities.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";
import { effectiveChangeStatus, findByChangeToken } from "./change-session-store.ts";
import type { FundingOption } from "../list-funding-options.ts";
import { fundingOption, quotePlan } from "../funding.ts";
import { fetchMerchantName, fetchPlan, type SubscriptionPorts } from "../ports.ts";

interface ChangeApprovalView {
  session: ChangeSessionRow;
  /** What the customer should see (an overdue PENDING_APPROVAL is EXPIRED). */
  status: ChangeSessionRow["status"];
  subscription: SubscriptionRow;
  merchantName: string;
  currentPlan: Plan;
  requestedPlan: Plan;
}

/** Everything the hosted page shows for a change token: the plan now, the plan requested, for whom, by whom. */
export async function getChangeApproval(ctx: UseCaseContext, ports: SubscriptionPorts, token: string): Promise<ChangeApprovalView> {
  const { session, subscription } = await findByChangeToken(ctx.em, token);
  const [currentPlan, requestedPlan, merchantName] = await Promise.all([
    fetchPlan(ports, subscription.merchantId, subscription.planId),
    fetchPlan(ports, subscription.merchantId, session.requestedPlanId),
    fetchMerchantName(ports, subscription.merchantId),
  ]);
  return { session, status: effectiveChangeStatus(session, ctx.clock.now()), subscription, merchantName, currentPlan, requestedPlan };
}

/**
 * The one account that pays a change: the subscription's funding asset (not
 * chosen again), with its balance and what the approval charges in it now
 * (the immediate charge; zero otherwise). Empty when the wallet user no
 * longer holds that account.
 */
export async function listChangeFundingOptions(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  input: { token: string; walletUserId: string },
): Promise<FundingOption[]> {
  const { session, subscription } = await findByChangeToken(ctx.em, input.token);
  if (subscription.walletUserId !== input.walletUserId) {
    throw new DomainError("failed_precondition", "WALLET_USER_MISMATCH", "this change must be approved by the subscription's wallet user");
  }
  const code = subscription.fundingAsset;
  if (!code) return [];
  const [requested, { accounts }, { assets }] = await Promise.all([
    fetchPlan(ports, subscription.merchantId, session.requestedPlanId),
    ports.wallet.listAccounts({ ownerType: OwnerType.WALLET_USER, ownerId: input.walletUserId }),
    ports.wallet.listAssets({}),
  ]);
  const account = accounts.find((a) => a.asset === code);
  const asset = assets.find((a) => a.code === code);
  if (!account || !asset) return [];
  const charge = session.effectiveMode === "IMMEDIATE" ? formatAmount(session.immediateChargeAmount) : "0";
  const quote = isZero(amount(charge)) ? { assetAmount: "0", rate: "" } : await quotePlan(ports, { ...requested, amount: charge }, code);
  if (!quote) return [];
  return [fundingOption(asset, account, quote)];
}

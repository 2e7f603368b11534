import type { Plan } from "../../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { DomainError, invalid } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { recordEvent } from "../../events/record-event.ts";
import { Subscription, type AuthorizationRow, type SubscriptionRow } from "../entities.ts";
import type { SubscriptionStatus } from "../status-machine.ts";
import { FALLBACK_ASSETS_MAX, FUNDING_CHANGEABLE_STATUSES } from "../contract.ts";
import { subscriptionRecord } from "../subscription-record.ts";
import { currentAuthorization, lockSubscription, subscriptionNotFound } from "../subscription-store.ts";
import { fetchPlan, type SubscriptionPorts } from "../ports.ts";
import { fundingOptionsForPlan } from "../list-funding-options.ts";
import { touch } from "../../platform/record-version.ts";

const ASSET_CODE = /^[A-Z0-9_]{1,16}$/;

/**
 * The rules of a funding fallback, for SetFundingFallback and the approval:
 * up to FALLBACK_ASSETS_MAX asset codes, distinct, none the funding asset,
 * each an account of the customer that can pay the plan (same currency or
 * convertible, the amount fits a charge) and is not frozen. `field` names
 * the input in the 400s.
 */
export async function validateFallbackAssets(
  ports: SubscriptionPorts,
  plan: Plan,
  walletUserId: string,
  fundingAsset: string | null,
  assets: readonly string[],
  field: string,
): Promise<string[]> {
  checkFallbackShape(assets, field);
  if (fundingAsset && assets.includes(fundingAsset))
    throw invalid("INVALID_REQUEST", `${field}: ${fundingAsset} is the funding asset; a fallback must be another asset`);
  if (assets.length === 0) return [];
  const options = await fundingOptionsForPlan(ports, plan, walletUserId);
  assets.forEach((a, i) => {
    const option = options.find((o) => o.asset === a);
    if (!option) throw invalid("FUNDING_ASSET_NOT_SUPPORTED", `${field}[${i}]: ${a} is not an account of this wallet that can pay ${plan.currency}`);
    if (option.frozen) throw new DomainError("failed_precondition", "ACCOUNT_FROZEN", `${field}[${i}]: the ${a} account is frozen`);
  });
  return [...assets];
}

/** The input's own rules (count, codes, distinct), checked before anything is read. */
function checkFallbackShape(assets: readonly string[], field: string): void {
  if (assets.length > FALLBACK_ASSETS_MAX) throw invalid("INVALID_REQUEST", `${field}: at most ${FALLBACK_ASSETS_MAX} assets`);
  assets.forEach((a, i) => {
    if (!ASSET_CODE.test(a)) throw invalid("INVALID_REQUEST", `${field}[${i}]: must be an asset code (A-Z, 0-9, _; 1 to 16 characters)`);
  });
  if (new Set(assets).size !== assets.length) throw invalid("INVALID_REQUEST", `${field}: assets must be distinct`);
}

interface FundingFallbackSet {
  subscription: SubscriptionRow;
  authorization: AuthorizationRow | null;
}

/**
 * The customer names the assets tried, in order, when the funding asset
 * cannot pay a renewal or retry (renewals/choose-paying-asset.ts); an empty
 * list clears them. Customer-scoped like ChangeFundingAsset: another
 * customer's subscription is not found. One transaction under the row lock
 * stamps them and records subscription.funding_fallback_changed (with
 * previousFallbackAssets); the same list again changes and records nothing.
 */
export async function setFundingFallback(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  input: { walletUserId: string; subscriptionId: string; assets: readonly string[] },
): Promise<FundingFallbackSet> {
  if (!isUuid(input.walletUserId)) throw invalid("INVALID_REQUEST", "walletUserId: must be a UUID");
  if (!isUuid(input.subscriptionId)) throw subscriptionNotFound(input.subscriptionId);
  checkFallbackShape(input.assets, "assets");
  const current = await ctx.em.fork().findOne(Subscription, { id: input.subscriptionId, walletUserId: input.walletUserId });
  if (!current) throw subscriptionNotFound(input.subscriptionId);
  refuseStatus(current.status);
  const plan = await fetchPlan(ports, current.merchantId, current.planId);
  const assets = await validateFallbackAssets(ports, plan, input.walletUserId, current.fundingAsset ?? null, input.assets, "assets");

  return ctx.em.fork().transactional(async (em) => {
    const sub = await lockSubscription(em, input.subscriptionId, { walletUserId: input.walletUserId });
    refuseStatus(sub.status);
    const authorization = await currentAuthorization(em, sub.id);
    // Checked against what was validated: a plan or funding asset changed meanwhile means asking again.
    if (sub.planId !== plan.id || sub.fundingAsset !== current.fundingAsset) {
      throw new DomainError("failed_precondition", "SUBSCRIPTION_CHANGED", "the subscription changed meanwhile; try again");
    }
    const previousFallbackAssets = [...sub.fallbackAssets];
    if (previousFallbackAssets.join(",") === assets.join(",")) return { subscription: sub, authorization };
    const now = ctx.clock.now();
    sub.fallbackAssets = assets;
    touch(sub, now);
    recordEvent(em, ctx.clock, {
      merchantId: sub.merchantId,
      type: "subscription.funding_fallback_changed",
      data: { ...subscriptionRecord(sub, authorization), previousFallbackAssets },
    });
    return { subscription: sub, authorization };
  });
}

function refuseStatus(status: SubscriptionStatus): void {
  if (!(FUNDING_CHANGEABLE_STATUSES as readonly string[]).includes(status)) {
    throw new DomainError("failed_precondition", "SUBSCRIPTION_NOT_CHANGEABLE", `cannot change the funding fallback of a subscription in status ${status}`);
  }
}

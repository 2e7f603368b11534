import type { UseCaseContext } from "../../platform/use-case.ts";
import { DomainError, invalid } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { recordEvent } from "../../events/record-event.ts";
import { Subscription, type AuthorizationRow, type SubscriptionRow } from "../entities.ts";
import type { SubscriptionStatus } from "../status-machine.ts";
import { ASSET_AMOUNT_TOO_LARGE, FUNDING_CHANGEABLE_STATUSES } from "../contract.ts";
import { quoteFunding, tooLargeForAsset } from "../funding.ts";
import { subscriptionRecord } from "../subscription-record.ts";
import { currentAuthorization, lockSubscription, subscriptionNotFound } from "../subscription-store.ts";
import { paymentInProgress } from "../charges/charge-ports.ts";
import { fetchPlan, type SubscriptionPorts } from "../ports.ts";
import { fundingOptionsForPlan } from "../list-funding-options.ts";
import { chargeInFlight } from "../charges/wait-for-charges.ts";
import { renewSubscription } from "../renewals/renew-subscription.ts";
import { touch } from "../../platform/record-version.ts";

const FUNDING_CHANGEABLE: readonly SubscriptionStatus[] = FUNDING_CHANGEABLE_STATUSES;

const ASSET_CODE = /^[A-Z0-9_]{1,16}$/;

interface FundingAssetChanged {
  subscription: SubscriptionRow;
  authorization: AuthorizationRow | null;
  /** The subscription was PAST_DUE, the new asset covered the amount due and the retry ran. */
  retried: boolean;
}

/**
 * The customer picks the asset that pays the subscription's later charges.
 * The asset must be one of the customer's accounts that can pay the plan
 * (same currency or convertible) and not frozen. One transaction under the
 * row lock stamps it and records `subscription.funding_asset_changed`; a
 * charge in flight is left to finish first (409 PAYMENT_IN_PROGRESS). When the
 * subscription is PAST_DUE and the new asset's balance covers the amount due,
 * the retry runs at once (the renewal engine, as after a top-up).
 */
export async function changeFundingAsset(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  input: { walletUserId: string; subscriptionId: string; asset: string },
): Promise<FundingAssetChanged> {
  if (!isUuid(input.walletUserId)) throw invalid("INVALID_REQUEST", "walletUserId: must be a UUID");
  if (!isUuid(input.subscriptionId)) throw subscriptionNotFound(input.subscriptionId);
  if (!ASSET_CODE.test(input.asset)) throw invalid("INVALID_REQUEST", "asset: must be an asset code (A-Z, 0-9, _; 1 to 16 characters)");

  const current = await ctx.em.fork().findOne(Subscription, { id: input.subscriptionId, walletUserId: input.walletUserId });
  if (!current) throw subscriptionNotFound(input.subscriptionId);
  refuseStatus(current.status);
  const plan = await fetchPlan(ports, current.merchantId, current.planId);
  const option = (await fundingOptionsForPlan(ports, plan, input.walletUserId)).find((o) => o.asset === input.asset);
  if (!option) {
    // Left out of the options because the price would not fit a charge in it: say so, with the limit.
    const priced = await quoteFunding(ports, plan, input.asset);
    if (priced.kind === "too_large") throw invalid(ASSET_AMOUNT_TOO_LARGE, `asset: ${tooLargeForAsset(plan, input.asset, priced.assetAmount)}`);
    throw invalid("FUNDING_ASSET_NOT_SUPPORTED", `asset: ${input.asset} is not an account of this wallet that can pay ${plan.currency}`);
  }
  if (option.frozen) throw new DomainError("failed_precondition", "ACCOUNT_FROZEN", `asset: the ${input.asset} account is frozen`);

  const changed = await ctx.em.fork().transactional(async (em) => {
    const sub = await lockSubscription(em, input.subscriptionId, { walletUserId: input.walletUserId });
    refuseStatus(sub.status);
    const authorization = await currentAuthorization(em, sub.id);
    // The plan changed since it was fetched (a change session applied): its currency may differ; ask again.
    if (sub.planId !== plan.id) throw new DomainError("failed_precondition", "SUBSCRIPTION_CHANGED", "the subscription changed meanwhile; try again");
    if (sub.fundingAsset === input.asset) return { subscription: sub, authorization, changed: false };
    if (await chargeInFlight(em, sub.id)) throw paymentInProgress("this subscription");
    const previousFundingAsset = sub.fundingAsset ?? null;
    const now = ctx.clock.now();
    sub.fundingAsset = input.asset;
    touch(sub, now);
    recordEvent(em, ctx.clock, {
      merchantId: sub.merchantId,
      type: "subscription.funding_asset_changed",
      data: { ...subscriptionRecord(sub, authorization), previousFundingAsset },
    });
    return { subscription: sub, authorization, changed: true };
  });

  if (!changed.changed || changed.subscription.status !== "PAST_DUE" || !option.sufficient) {
    return { subscription: changed.subscription, authorization: changed.authorization, retried: false };
  }
  await renewSubscription({ em: ctx.em.fork(), clock: ctx.clock }, ports, { subscriptionId: changed.subscription.id, retryNow: true });
  const after = await ctx.em.fork().findOneOrFail(Subscription, { id: changed.subscription.id });
  return { subscription: after, authorization: changed.authorization, retried: true };
}

function refuseStatus(status: SubscriptionStatus): void {
  if (!FUNDING_CHANGEABLE.includes(status)) {
    throw new DomainError("failed_precondition", "SUBSCRIPTION_NOT_CHANGEABLE", `cannot change the funding asset of a subscription in status ${status}`);
  }
}

import type { Plan } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import type { UseCaseContext } from "../platform/use-case.ts";
import { DomainError, invalid } from "../platform/errors.ts";
import { formatAmount } from "../platform/money.ts";
import { recordEvent } from "../events/record-event.ts";
import type { AuthorizationRow, ChargeRow, SubscriptionRow } from "./entities.ts";
import { trialEnd } from "./billing-calendar.ts";
import { nextStatus } from "./status-machine.ts";
import { subscriptionRecord } from "./subscription-record.ts";
import { currentAuthorization, lockSubscription, pendingFirstCharge } from "./subscription-store.ts";
import { assertAnswerable, findByToken } from "./authorization-lookup.ts";
import { openFirstCharge, type FirstChargeTerms } from "./first-payment.ts";
import { settleCharge } from "./charges/settle-charge.ts";
import type { FailureReason } from "./charges/open-charge.ts";
import { paymentInProgress } from "./charges/charge-ports.ts";
import { quoteFunding, quotePlan, requireFundingAsset, tooLargeForAsset } from "./funding.ts";
import { periodPrice, sameAmount } from "./pricing/period-price.ts";
import { chargeTerms } from "./pricing/price-terms.ts";
import { exceedsCap } from "./renewals/exceeds-cap.ts";
import { ASSET_AMOUNT_TOO_LARGE } from "./contract.ts";
import { fetchPlan, fetchWalletUserById, planInterval, type SubscriptionPorts } from "./ports.ts";
import { touch } from "../platform/record-version.ts";
import { markAuthorization } from "./authorization-status.ts";
import { validateFallbackAssets } from "./customer/set-funding-fallback.ts";

interface ApproveInput {
  token: string;
  walletUserId: string;
  fundingAsset: string;
  /** Optional, in order (customer/set-funding-fallback.ts rules); stored with the approval. */
  fallbackAssets?: readonly string[] | undefined;
}

export type ApprovalOutcome = "APPROVED" | FailureReason;

interface ApprovalResult {
  outcome: ApprovalOutcome;
  subscription: SubscriptionRow;
  authorization: AuthorizationRow | null;
  charge: ChargeRow | undefined;
  /** For the customer, when refused. */
  message: string;
}

/**
 * The customer approved on the hosted page (the gateway has checked their
 * password and PIN with the wallet). With a trial the subscription starts
 * TRIALING and nothing is charged; otherwise the first period is paid from the
 * chosen asset at once (first-payment.ts) and the subscription becomes ACTIVE.
 * A refused payment (balance, frozen account, charge cap) is an outcome: the
 * authorization stays pending so the customer can choose another asset.
 */
export async function approveAuthorization(ctx: UseCaseContext, ports: SubscriptionPorts, input: ApproveInput): Promise<ApprovalResult> {
  let { subscription } = await findByToken(ctx.em, input.token);
  if (subscription.walletUserId !== input.walletUserId) {
    throw new DomainError("failed_precondition", "WALLET_USER_MISMATCH", "this subscription must be approved by the wallet user it names");
  }

  // A first payment an earlier try left in flight is finished before anything else.
  const inFlight = await pendingFirstCharge(ctx.em, subscription.id);
  if (inFlight) {
    const settled = await settleCharge(ctx, ports, inFlight.id, false);
    if (settled.state === "in_progress") throw paymentInProgress("this authorization");
    if (settled.charge.status === "SUCCEEDED") return approved(ctx, settled.subscription, settled.charge);
  }

  const found = await findByToken(ctx.em.fork(), input.token);
  subscription = found.subscription;
  assertAnswerable(found.authorization, subscription, ctx.clock.now());

  const [user, plan, asset] = await Promise.all([
    fetchWalletUserById(ports, input.walletUserId),
    fetchPlan(ports, subscription.merchantId, subscription.planId),
    requireFundingAsset(ports, input.fundingAsset),
  ]);
  if (user.pinLocked) {
    throw new DomainError("failed_precondition", "PIN_LOCKED", "the payment PIN is locked after too many wrong tries");
  }
  const priced = await quoteFunding(ports, plan, asset.code);
  if (priced.kind === "unavailable") throw invalid("FUNDING_ASSET_NOT_SUPPORTED", `fundingAsset: ${asset.code} cannot pay a plan priced in ${plan.currency}`);
  // Checked before a trial starts too: its first renewal could never be charged in this asset.
  if (priced.kind === "too_large") throw invalid(ASSET_AMOUNT_TOO_LARGE, `fundingAsset: ${tooLargeForAsset(plan, asset.code, priced.assetAmount)}`);
  const { quote } = priced;
  const fallbackAssets = await validateFallbackAssets(ports, plan, input.walletUserId, asset.code, input.fallbackAssets ?? [], "fallbackAssets");
  if (user.status !== "ACTIVE") {
    return refused(ctx, subscription, "ACCOUNT_FROZEN", undefined, `Your wallet account is frozen, so it cannot approve payments.`);
  }

  if (plan.trialDays > 0) return startTrial(ctx, subscription.id, { ...input, fallbackAssets }, plan);

  // The period's price (discount, credit: pricing/period-price.ts); the checks above priced the undiscounted amount.
  const price = periodPrice(plan.amount, plan.currency, subscription);
  const priceQuote = price.amount === formatAmount(plan.amount) ? quote : await quotePlan(ports, { amount: price.amount, currency: plan.currency }, asset.code);
  const terms: FirstChargeTerms = {
    ...chargeTerms(price, plan.currency, asset.code, priceQuote),
    interval: planInterval(plan),
    intervalCount: plan.intervalCount,
  };
  // The cap is in the plan's currency; plan create refuses a cap below the amount, so this guards later plan changes.
  const capExceeded = exceedsCap(plan);

  const opened = await ctx.em.transactional(async (em) => {
    const sub = await lockSubscription(em, subscription.id);
    const authorization = await currentAuthorization(em, sub.id);
    if (!authorization) throw new Error(`subscription ${sub.id} has no authorization`);
    assertAnswerable(authorization, sub, ctx.clock.now());
    if (await pendingFirstCharge(em, sub.id)) throw paymentInProgress("this authorization");
    // Stored with this try (a refused try's are replaced by the next one's); events show them once the subscription is approved.
    sub.fallbackAssets = fallbackAssets;
    // A discount changed since it was priced: the customer tries again and sees the new price.
    if (!sameAmount(periodPrice(plan.amount, plan.currency, sub), price)) throw paymentInProgress("this authorization");
    return openFirstCharge(em, ctx.clock.now(), sub, terms, capExceeded ? "MAXIMUM_CHARGE_EXCEEDED" : undefined);
  });
  if (capExceeded) {
    return refused(
      ctx,
      subscription,
      "MAXIMUM_CHARGE_EXCEEDED",
      opened,
      `The plan amount ${formatAmount(plan.amount)} ${plan.currency} is above its maximum charge of ${plan.maximumChargeAmount} ${plan.currency}.`,
    );
  }

  const settled = await settleCharge(ctx, ports, opened.id, opened.leaseGeneration);
  if (settled.state === "in_progress") throw paymentInProgress("this authorization");
  const { charge } = settled;
  if (charge.status === "SUCCEEDED") return approved(ctx, settled.subscription, charge);
  if (charge.failureReason === "ACCOUNT_FROZEN") {
    return refused(ctx, settled.subscription, "ACCOUNT_FROZEN", charge, `Your ${charge.asset} account is frozen. Choose another asset.`);
  }
  return refused(
    ctx,
    settled.subscription,
    "INSUFFICIENT_FUNDS",
    charge,
    `Your ${charge.asset} balance does not cover ${formatAmount(charge.assetAmount ?? "0")} ${charge.asset}. Choose another asset or top up your wallet.`,
  );
}

/** PENDING_APPROVAL → TRIALING: no charge; the first billing date (and the anchor) is the trial's end. */
async function startTrial(ctx: UseCaseContext, subscriptionId: string, input: ApproveInput, plan: Plan): Promise<ApprovalResult> {
  return ctx.em.transactional(async (em) => {
    const sub = await lockSubscription(em, subscriptionId);
    const authorization = await currentAuthorization(em, sub.id);
    if (!authorization) throw new Error(`subscription ${sub.id} has no authorization`);
    const now = ctx.clock.now();
    assertAnswerable(authorization, sub, now);
    const end = trialEnd(now, plan.trialDays);
    sub.status = nextStatus(sub.status, "approve_with_trial");
    sub.fundingAsset = input.fundingAsset;
    sub.fallbackAssets = [...(input.fallbackAssets ?? [])];
    sub.trialEnd = end;
    sub.billingAnchor = end;
    sub.currentPeriodStart = now;
    sub.currentPeriodEnd = end;
    sub.nextBillingAt = end;
    sub.activatedAt = now;
    touch(sub, now);
    markAuthorization(authorization, "approve", now);
    authorization.approvedWalletUserId = input.walletUserId;
    authorization.fundingAsset = input.fundingAsset;
    recordEvent(em, ctx.clock, { merchantId: sub.merchantId, type: "subscription.trialing", data: subscriptionRecord(sub, authorization) });
    return { outcome: "APPROVED", subscription: sub, authorization, charge: undefined, message: "" };
  });
}

async function approved(ctx: UseCaseContext, subscription: SubscriptionRow, charge: ChargeRow): Promise<ApprovalResult> {
  const authorization = await currentAuthorization(ctx.em.fork(), subscription.id);
  return { outcome: "APPROVED", subscription, authorization, charge, message: "" };
}

async function refused(
  ctx: UseCaseContext,
  subscription: SubscriptionRow,
  outcome: FailureReason,
  charge: ChargeRow | undefined,
  message: string,
): Promise<ApprovalResult> {
  const authorization = await currentAuthorization(ctx.em.fork(), subscription.id);
  return { outcome, subscription, authorization, charge, message };
}

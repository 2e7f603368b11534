import type { UseCaseContext } from "../../platform/use-case.ts";
import { DomainError } from "../../platform/errors.ts";
import { amount, compare, formatAmount, isZero } from "../../platform/money.ts";
import { recordEvent } from "../../events/record-event.ts";
import type { ChargeRow, SubscriptionRow } from "../entities.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";
import { changeSessionMachine } from "./change-session-status-machine.ts";
import { changeSessionRecord } from "./change-session-record.ts";
import { assertChangeAnswerable, findByChangeToken, lockChangeSession, pendingSessionCharge } from "./change-session-store.ts";
import { changeableRefusal, type ChangeRefusal } from "./changeable-refusal.ts";
import { openChangeCharge } from "./change-charge.ts";
import { settleCharge } from "../charges/settle-charge.ts";
import { paymentInProgress } from "../charges/charge-ports.ts";
import { afterChargeSettles, refuseUnderCharge } from "../charges/wait-for-charges.ts";
import { settleAutomaticRefund } from "../refunds/automatic-refund.ts";
import { quoteFunding, tooLargeForAsset } from "../funding.ts";
import { ASSET_AMOUNT_TOO_LARGE } from "../contract.ts";
import { fetchPlan, fetchPlanPricing, fetchWalletUserById, type SubscriptionPorts } from "../ports.ts";
import { chargedPart, prorationFor } from "../pricing/proration.ts";
import { creditProration } from "../pricing/proration-credit.ts";
import { lockSubscription } from "../subscription-store.ts";
import { supersedeScheduled, switchPlan } from "./switch-plan.ts";
import { schedulePlanChange } from "./change-session-queue.ts";
import { touch } from "../../platform/record-version.ts";

interface ChangeApprovalResult {
  approved: boolean;
  refusal?: ChangeRefusal;
  /** For the customer, when refused. */
  message: string;
  session: ChangeSessionRow;
  subscription: SubscriptionRow;
  charge: ChargeRow | undefined;
}

/**
 * The customer approved a plan change on the hosted page (the gateway has
 * checked their password and PIN with the wallet). The subscription's
 * funding asset pays; it is not chosen again.
 *
 * IMMEDIATE: the immediate charge (if above zero) is taken first through the
 * charge protocol (platform/wallet-calls/wallet-call.ts: PENDING row → wallet with the row id as key →
 * settle); its success switches the plan in the settling transaction. A
 * refused charge is an outcome with a message, and nothing changes: the
 * session stays open so the customer can top up and approve again.
 * NEXT_BILLING: the session becomes SCHEDULED for the next billing date and
 * a delayed job is enqueued after commit (the sweep and the renewal engine
 * apply it too). Either way, an approved change supersedes a scheduled one.
 *
 * A renewal charge in flight is settled first (as pause and resume do,
 * charges/wait-for-charges.ts) and the approval is decided on what it left:
 * otherwise a change approved mid-renewal would be scheduled for the billing
 * being charged at the old price (plan_changed, then renewed at the old
 * price), or an immediate one priced on a subscription about to be PAST_DUE.
 * Past the wait, PAYMENT_IN_PROGRESS (409) and the customer retries.
 */
export async function approveChangeSession(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  input: { token: string; walletUserId: string },
): Promise<ChangeApprovalResult> {
  const { session, subscription } = await findByChangeToken(ctx.em, input.token);
  if (subscription.walletUserId !== input.walletUserId) {
    throw new DomainError("failed_precondition", "WALLET_USER_MISMATCH", "this change must be approved by the subscription's wallet user");
  }

  // A charge an earlier try left in flight is finished before anything else.
  const inFlight = await pendingSessionCharge(ctx.em, session.id);
  if (inFlight) {
    const settled = await settleCharge(ctx, ports, inFlight.id, false);
    if (settled.state === "in_progress") throw paymentInProgress("this change");
    if (settled.charge.status === "SUCCEEDED") return afterPaid(ctx, ports, input.token, settled.charge);
  }
  return afterChargeSettles(ctx, ports, () => approveOnce(ctx, ports, input));
}

/** One try on the subscription as it is now; throws ChargeInFlight (under the lock) when a renewal charge is in flight. */
async function approveOnce(ctx: UseCaseContext, ports: SubscriptionPorts, input: { token: string; walletUserId: string }): Promise<ChangeApprovalResult> {
  const { session, subscription } = await findByChangeToken(ctx.em.fork(), input.token);
  assertChangeAnswerable(session, ctx.clock.now());
  const refusedEarly = changeableRefusal(session, subscription);
  if (refusedEarly) return { approved: false, ...refusedEarly, session, subscription, charge: undefined };

  const user = await fetchWalletUserById(ports, input.walletUserId);
  if (user.pinLocked) throw new DomainError("failed_precondition", "PIN_LOCKED", "the payment PIN is locked after too many wrong tries");
  if (user.status !== "ACTIVE") {
    return {
      approved: false,
      refusal: "ACCOUNT_FROZEN",
      message: "Your wallet account is frozen, so it cannot approve changes.",
      session,
      subscription,
      charge: undefined,
    };
  }

  // PRORATE (pricing/proration.ts): the immediate charge is what the change comes to now; a credit is written under the lock below.
  const prorating = session.proration === "PRORATE" && session.effectiveMode === "IMMEDIATE";
  const oldAmount = prorating ? (await fetchPlanPricing(ports, subscription.merchantId, session.currentPlanId)).amount : "0";
  const prorate = (sub: SubscriptionRow) => prorationFor(sub, oldAmount, formatAmount(session.requestedAmount), ctx.clock.now());
  const chargeAmount = prorating ? chargedPart(prorate(subscription)) : formatAmount(session.immediateChargeAmount);
  if (session.effectiveMode === "IMMEDIATE" && !isZero(amount(chargeAmount))) {
    return approveWithCharge(ctx, ports, input.token, session, subscription, chargeAmount);
  }

  const result = await ctx.em.fork().transactional(async (em) => {
    const sub = await lockSubscription(em, subscription.id);
    const row = await lockChangeSession(em, session.id);
    const now = ctx.clock.now();
    assertChangeAnswerable(row, now);
    // A renewal charge in flight is settled before this approval is decided (afterChargeSettles).
    await refuseUnderCharge(em, sub.id, "RENEWAL");
    const refused = changeableRefusal(row, sub);
    if (refused) return { approved: false, ...refused, session: row, subscription: sub, charge: undefined };
    if (row.effectiveMode === "IMMEDIATE") {
      if (prorating) row.prorationAmount = creditProration(sub, prorate(sub), row.requestedCurrency);
      await switchPlan(em, ctx.clock, sub, row, "approve_immediate");
    } else {
      await supersedeScheduled(em, ctx.clock, sub.id, row.id);
      row.status = changeSessionMachine.next(row.status, "approve_next_billing");
      row.approvedAt = now;
      touch(row, now);
      // Paused: still the date billing stopped at; the change waits for the first billing after resume.
      row.scheduledFor = sub.nextBillingAt ?? now;
      recordEvent(em, ctx.clock, { merchantId: sub.merchantId, type: "subscription.change_session.approved", data: changeSessionRecord(row) });
    }
    return { approved: true, message: "", session: row, subscription: sub, charge: undefined };
  });
  if (result.approved && result.session.status === "SCHEDULED") {
    await schedulePlanChange(ports.queues, result.session.id, result.session.scheduledFor!.getTime() - ctx.clock.now().getTime());
  }
  return result;
}

async function approveWithCharge(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  token: string,
  session: ChangeSessionRow,
  subscription: SubscriptionRow,
  chargeAmount: string,
): Promise<ChangeApprovalResult> {
  const asset = subscription.fundingAsset!;
  const requested = await fetchPlan(ports, subscription.merchantId, session.requestedPlanId);
  const price = { amount: chargeAmount, currency: requested.currency };
  const priced = await quoteFunding(ports, price, asset);
  // Create refused both; rates move, so the approval answers them as refusals too (never a database error).
  if (priced.kind === "unavailable") {
    const message = `Your ${asset} account cannot pay an amount in ${requested.currency} now. Nothing was charged or changed.`;
    return { approved: false, refusal: "CONVERSION_UNAVAILABLE", message, session, subscription, charge: undefined };
  }
  if (priced.kind === "too_large") {
    const message = `The charge of ${tooLargeForAsset(price, asset, priced.assetAmount)}. Nothing was charged or changed.`;
    return { approved: false, refusal: ASSET_AMOUNT_TOO_LARGE, message, session, subscription, charge: undefined };
  }
  const { quote } = priced;
  // The cap is in the plan's currency; create refuses a charge above it, so this guards a plan edited since.
  const capExceeded = requested.maximumChargeAmount !== undefined && compare(amount(chargeAmount), amount(requested.maximumChargeAmount)) > 0;

  const opened = await ctx.em.fork().transactional(async (em) => {
    const sub = await lockSubscription(em, subscription.id);
    const row = await lockChangeSession(em, session.id);
    assertChangeAnswerable(row, ctx.clock.now());
    if (await pendingSessionCharge(em, row.id)) throw paymentInProgress("this change");
    // A renewal charge in flight is settled before this approval is decided (afterChargeSettles).
    await refuseUnderCharge(em, sub.id, "RENEWAL");
    const refused = changeableRefusal(row, sub);
    if (refused) return { refused, row, sub };
    // Quoted for the asset read before the lock: a charge is only ever opened in the asset it was quoted for.
    if (sub.fundingAsset !== asset)
      throw new DomainError("failed_precondition", "SUBSCRIPTION_CHANGED", "the subscription's funding asset changed meanwhile; try again");
    const terms = { amount: chargeAmount, currency: requested.currency, asset, assetAmount: quote.assetAmount, rate: quote.rate, rateAt: quote.rateAt };
    if (row.proration === "PRORATE") row.prorationAmount = chargeAmount;
    return { charge: await openChangeCharge(em, ctx.clock.now(), sub, row, terms, capExceeded ? "MAXIMUM_CHARGE_EXCEEDED" : undefined) };
  });
  if ("refused" in opened) return { approved: false, ...opened.refused!, session: opened.row!, subscription: opened.sub!, charge: undefined };
  if (capExceeded) {
    return refusedWith(
      ctx,
      token,
      "MAXIMUM_CHARGE_EXCEEDED",
      opened.charge,
      `The charge of ${chargeAmount} ${requested.currency} is above the plan's maximum charge of ${requested.maximumChargeAmount} ${requested.currency}.`,
    );
  }

  const settled = await settleCharge(ctx, ports, opened.charge.id, opened.charge.leaseGeneration);
  if (settled.state === "in_progress") throw paymentInProgress("this change");
  const { charge } = settled;
  if (charge.status === "SUCCEEDED") return afterPaid(ctx, ports, token, charge);
  if (charge.failureReason === "ACCOUNT_FROZEN") {
    return refusedWith(ctx, token, "ACCOUNT_FROZEN", charge, `Your ${charge.asset} account is frozen, so the change cannot be paid. Nothing was charged.`);
  }
  return refusedWith(
    ctx,
    token,
    "INSUFFICIENT_FUNDS",
    charge,
    `Your ${charge.asset} balance does not cover ${formatAmount(charge.assetAmount ?? "0")} ${charge.asset}. Top up your wallet and approve again; nothing was charged or changed.`,
  );
}

/**
 * The immediate charge succeeded: its settle applied the change, or found
 * that the change no longer applies (apply-paid-change.ts) and wrote a refund
 * of it, which is settled here so the customer reads the outcome at once
 * (the subscriptions sweep settles it otherwise).
 */
async function afterPaid(ctx: UseCaseContext, ports: SubscriptionPorts, token: string, charge: ChargeRow): Promise<ChangeApprovalResult> {
  const { session, subscription } = await findByChangeToken(ctx.em.fork(), token);
  if (session.status === "APPLIED") return { approved: true, message: "", session, subscription, charge };
  let refunded = false;
  try {
    refunded = (await settleAutomaticRefund(ctx, ports, charge.id))?.state === "succeeded";
  } catch (err) {
    ports.logger.warn({ err, chargeId: charge.id }, "could not settle the refund of a plan change not applied; the sweep retries");
  }
  const why = changeableRefusal(session, subscription) ?? {
    refusal: "SUBSCRIPTION_NOT_CHANGEABLE" as const,
    message: "This change no longer applies to your subscription.",
  };
  const paid = `${formatAmount(charge.assetAmount ?? "0")} ${charge.asset}`;
  const message = `${why.message} Your payment of ${paid} ${refunded ? "has been refunded" : "is being refunded"}.`;
  return { approved: false, refusal: why.refusal, message, session, subscription, charge };
}

async function refusedWith(ctx: UseCaseContext, token: string, refusal: ChangeRefusal, charge: ChargeRow, message: string): Promise<ChangeApprovalResult> {
  const { session, subscription } = await findByChangeToken(ctx.em.fork(), token);
  return { approved: false, refusal, message, session, subscription, charge };
}

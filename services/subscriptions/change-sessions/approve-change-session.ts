import type { UseCaseContext } from "../../platform/use-case.ts";
import { DomainError } from "../../platform/errors.ts";
import { amount, compare, formatAmount, isZero } from "../../platform/money.ts";
import { recordEvent } from "../../events/record-event.ts";
import type { ChargeRow, SubscriptionRow } from "../entities.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";
import { nextChangeStatus } from "./change-session-status-machine.ts";
import { changeSessionRecord } from "./change-session-record.ts";
import {
  assertChangeAnswerable,
  CHANGEABLE_STATUSES,
  findByChangeToken,
  lockChangeSession,
  pendingSessionCharge,
} from "./change-session-store.ts";
import { openChangeCharge } from "./change-charge.ts";
import { settleCharge } from "../charges/settle-charge.ts";
import type { FailureReason } from "../charges/open-charge.ts";
import { paymentInProgress } from "../charges/lease.ts";
import { quoteFunding, tooLargeForAsset } from "../funding.ts";
import { ASSET_AMOUNT_TOO_LARGE } from "../contract.ts";
import { fetchPlan, fetchWalletUserById, type SubscriptionPorts } from "../ports.ts";
import { lockSubscription } from "../subscription-store.ts";
import { supersedeScheduled, switchPlan } from "./switch-plan.ts";
import { schedulePlanChange } from "./change-session-queue.ts";
import { touch } from "../../platform/record-version.ts";

export type ChangeRefusal = FailureReason | "SUBSCRIPTION_NOT_CHANGEABLE" | "PLAN_CHANGED" | "CONVERSION_UNAVAILABLE" | typeof ASSET_AMOUNT_TOO_LARGE;

export interface ChangeApprovalResult {
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
 * charge protocol (charges/lease.ts: PENDING row → wallet with the row id as key →
 * settle); its success switches the plan in the settling transaction. A
 * refused charge is an outcome with a message, and nothing changes: the
 * session stays open so the customer can top up and approve again.
 * NEXT_BILLING: the session becomes SCHEDULED for the next billing date and
 * a delayed job is enqueued after commit (the sweep and the renewal engine
 * apply it too). Either way, an approved change supersedes a scheduled one.
 */
export async function approveChangeSession(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  input: { token: string; walletUserId: string },
): Promise<ChangeApprovalResult> {
  let { session, subscription } = await findByChangeToken(ctx.em, input.token);
  if (subscription.walletUserId !== input.walletUserId) {
    throw new DomainError("failed_precondition", "WALLET_USER_MISMATCH", "this change must be approved by the subscription's wallet user");
  }

  // A charge an earlier try left in flight is finished before anything else.
  const inFlight = await pendingSessionCharge(ctx.em, session.id);
  if (inFlight) {
    const settled = await settleCharge(ctx, ports, inFlight.id, false);
    if (settled.state === "in_progress") throw paymentInProgress("this change");
    if (settled.charge.status === "SUCCEEDED") return reload(ctx, input.token, true, settled.charge);
  }

  ({ session, subscription } = await findByChangeToken(ctx.em.fork(), input.token));
  assertChangeAnswerable(session, ctx.clock.now());
  const refusedEarly = changeableRefusal(session, subscription);
  if (refusedEarly) return { approved: false, ...refusedEarly, session, subscription, charge: undefined };

  const user = await fetchWalletUserById(ports, input.walletUserId);
  if (user.pinLocked) throw new DomainError("failed_precondition", "PIN_LOCKED", "the payment PIN is locked after too many wrong tries");
  if (user.status !== "ACTIVE") {
    return { approved: false, refusal: "ACCOUNT_FROZEN", message: "Your wallet account is frozen, so it cannot approve changes.", session, subscription, charge: undefined };
  }

  const chargeAmount = formatAmount(session.immediateChargeAmount);
  if (session.effectiveMode === "IMMEDIATE" && !isZero(amount(chargeAmount))) {
    return approveWithCharge(ctx, ports, input.token, session, subscription, chargeAmount);
  }

  const result = await ctx.em.transactional(async (em) => {
    const sub = await lockSubscription(em, subscription.id);
    const row = await lockChangeSession(em, session.id);
    const now = ctx.clock.now();
    assertChangeAnswerable(row, now);
    const refused = changeableRefusal(row, sub);
    if (refused) return { approved: false, ...refused, session: row, subscription: sub, charge: undefined };
    if (row.effectiveMode === "IMMEDIATE") {
      await switchPlan(em, ctx.clock, sub, row, "approve_immediate");
    } else {
      await supersedeScheduled(em, ctx.clock, sub.id, row.id);
      row.status = nextChangeStatus(row.status, "approve_next_billing");
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

  const opened = await ctx.em.transactional(async (em) => {
    const sub = await lockSubscription(em, subscription.id);
    const row = await lockChangeSession(em, session.id);
    assertChangeAnswerable(row, ctx.clock.now());
    const refused = changeableRefusal(row, sub);
    if (refused) return { refused, row, sub };
    if (await pendingSessionCharge(em, row.id)) throw paymentInProgress("this change");
    const terms = { amount: chargeAmount, currency: requested.currency, asset, assetAmount: quote.assetAmount, rate: quote.rate };
    return { charge: await openChangeCharge(em, ctx.clock.now(), sub, row, terms, capExceeded ? "MAXIMUM_CHARGE_EXCEEDED" : undefined) };
  });
  if ("refused" in opened) return { approved: false, ...opened.refused!, session: opened.row!, subscription: opened.sub!, charge: undefined };
  if (capExceeded) {
    return refusedWith(ctx, token, "MAXIMUM_CHARGE_EXCEEDED", opened.charge,
      `The charge of ${chargeAmount} ${requested.currency} is above the plan's maximum charge of ${requested.maximumChargeAmount} ${requested.currency}.`);
  }

  const settled = await settleCharge(ctx, ports, opened.charge.id, opened.charge.leaseGeneration);
  if (settled.state === "in_progress") throw paymentInProgress("this change");
  const { charge } = settled;
  if (charge.status === "SUCCEEDED") return reload(ctx, token, true, charge);
  if (charge.failureReason === "ACCOUNT_FROZEN") {
    return refusedWith(ctx, token, "ACCOUNT_FROZEN", charge, `Your ${charge.asset} account is frozen, so the change cannot be paid. Nothing was charged.`);
  }
  return refusedWith(ctx, token, "INSUFFICIENT_FUNDS", charge,
    `Your ${charge.asset} balance does not cover ${formatAmount(charge.assetAmount ?? "0")} ${charge.asset}. Top up your wallet and approve again; nothing was charged or changed.`);
}

/** Under the locks: may this session still change this subscription? */
function changeableRefusal(session: ChangeSessionRow, sub: SubscriptionRow): { refusal: ChangeRefusal; message: string } | undefined {
  if (!CHANGEABLE_STATUSES.includes(sub.status)) {
    return { refusal: "SUBSCRIPTION_NOT_CHANGEABLE", message: `This subscription is ${sub.status.toLowerCase().replace("_", " ")}, so its plan cannot change now.` };
  }
  if (sub.planId !== session.currentPlanId) {
    return { refusal: "PLAN_CHANGED", message: "The subscription's plan has changed since this request was made. Ask the merchant for a new link." };
  }
  return undefined;
}

async function reload(ctx: UseCaseContext, token: string, approved: boolean, charge: ChargeRow | undefined): Promise<ChangeApprovalResult> {
  const { session, subscription } = await findByChangeToken(ctx.em.fork(), token);
  return { approved, message: "", session, subscription, charge };
}

async function refusedWith(ctx: UseCaseContext, token: string, refusal: ChangeRefusal, charge: ChargeRow, message: string): Promise<ChangeApprovalResult> {
  const { session, subscription } = await findByChangeToken(ctx.em.fork(), token);
  return { approved: false, refusal, message, session, subscription, charge };
}

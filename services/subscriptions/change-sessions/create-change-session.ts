import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { conflict, DomainError, invalid } from "../../platform/errors.ts";
import { amount, compare, formatAmount, isStorableAmountText, isZero } from "../../platform/money.ts";
import { recordEvent } from "../../events/record-event.ts";
import { SubscriptionChangeSession, EFFECTIVE_MODES, type ChangeSessionRow, type EffectiveMode } from "./change-session-entities.ts";
import { changeSessionRecord } from "./change-session-record.ts";
import { CHANGEABLE_STATUSES, changeApprovalUrl, openSessionOf } from "./change-session-store.ts";
import { expireChangeSessionNow } from "./expire-change-session.ts";
import { changeSessionToken } from "../authorization-token.ts";
import { isHttpUrl } from "../create-subscription.ts";
import { quoteFunding, tooLargeForAsset } from "../funding.ts";
import { fetchPlan, planInterval, refuseArchivedPlan, type SubscriptionPorts } from "../ports.ts";
import { findSubscription, lockSubscription } from "../subscription-store.ts";
import { scheduleChangeSessionExpiry } from "./change-session-queue.ts";
import { PRORATIONS, type Proration } from "../pricing/contract.ts";
import { ASSET_AMOUNT_TOO_LARGE, AUTHORIZATION_MINUTES, REASON_MAX_LENGTH, URL_MAX_LENGTH } from "../contract.ts";

/** Same lifetime as a subscription authorization's default. */
const CHANGE_SESSION_MINUTES = AUTHORIZATION_MINUTES.default;

interface CreateChangeSessionInput {
  merchantId: string;
  subscriptionId: string;
  requestedPlanId: string;
  effectiveMode?: string | undefined;
  immediateChargeAmount?: string | undefined;
  successUrl: string;
  cancelUrl: string;
  reason?: string | undefined;
  metadata: Record<string, unknown>;
  /** NONE (default) or PRORATE (pricing/proration.ts). */
  proration?: string | undefined;
}

interface CreatedChangeSession {
  session: ChangeSessionRow;
  approvalUrl: string;
}

const notChangeable = (status: string) =>
  new DomainError(
    "failed_precondition",
    "SUBSCRIPTION_NOT_CHANGEABLE",
    `the subscription is ${status}; only ACTIVE, TRIALING or PAUSED subscriptions can change plan`,
  );

/**
 * A merchant proposes a plan change; the customer approves it on the hosted
 * page at the returned approval URL (single use, same lifetime as an
 * authorization). Order of answers: 400 (the request itself), 404
 * (subscription, then plan), 409 (status, same plan, currency, open session),
 * 400 (charge above the requested plan's cap). The gateway validates the
 * same rules with JSON schemas; they are checked again here for gRPC callers.
 */
export async function createChangeSession(ctx: UseCaseContext, ports: SubscriptionPorts, input: CreateChangeSessionInput): Promise<CreatedChangeSession> {
  const mode = validate(input);
  const proration = validateProration(input, mode);
  const charge = input.immediateChargeAmount || "0";

  const sub = await findSubscription(ctx.em, input.subscriptionId, input.merchantId);
  const requested = await fetchPlan(ports, input.merchantId, input.requestedPlanId);
  if (!CHANGEABLE_STATUSES.includes(sub.status)) throw notChangeable(sub.status);
  if (requested.id === sub.planId) throw conflict("SAME_PLAN", "requestedPlanId: is already the subscription's plan");
  refuseArchivedPlan(requested, "requestedPlanId");
  const priced = sub.fundingAsset ? await quoteFunding(ports, requested, sub.fundingAsset) : ({ kind: "unavailable" } as const);
  if (priced.kind === "unavailable") {
    throw conflict(
      "CURRENCY_NOT_PAYABLE",
      `requestedPlanId: the plan is priced in ${requested.currency}, which the subscription's funding asset ${sub.fundingAsset ?? "(none)"} cannot pay`,
    );
  }
  // Its renewals (or the immediate charge) could never be charged in the funding asset: refused now, not at billing.
  if (priced.kind === "too_large") {
    throw conflict(ASSET_AMOUNT_TOO_LARGE, `requestedPlanId: ${tooLargeForAsset(requested, sub.fundingAsset!, priced.assetAmount)}`);
  }
  if (mode === "IMMEDIATE" && !isZero(amount(charge))) {
    const chargePriced = await quoteFunding(ports, { amount: formatAmount(charge), currency: requested.currency }, sub.fundingAsset!);
    if (chargePriced.kind === "too_large") {
      throw conflict(
        ASSET_AMOUNT_TOO_LARGE,
        `immediateChargeAmount: ${tooLargeForAsset({ amount: charge, currency: requested.currency }, sub.fundingAsset!, chargePriced.assetAmount)}`,
      );
    }
  }
  if (requested.maximumChargeAmount !== undefined && compare(amount(charge), amount(requested.maximumChargeAmount)) > 0) {
    throw invalid(
      "INVALID_REQUEST",
      `immediateChargeAmount: ${formatAmount(charge)} is above the requested plan's maximumChargeAmount ${requested.maximumChargeAmount} ${requested.currency}`,
    );
  }
  const current = await fetchPlan(ports, input.merchantId, sub.planId);
  const otherCredit = sub.creditCurrency != null && sub.creditCurrency !== requested.currency && !isZero(amount(sub.creditBalance ?? "0"));
  if (proration === "PRORATE" && (current.currency !== requested.currency || otherCredit)) {
    throw conflict(
      "PRORATION_CURRENCY_MISMATCH",
      `requestedPlanId: proration needs both plans in one currency (the current plan is in ${current.currency}, the requested one in ${requested.currency})`,
    );
  }

  const id = randomUUID();
  const { token, hash } = changeSessionToken(ports.linkKey, id);
  let session: ChangeSessionRow;
  try {
    session = await ctx.em.transactional(async (em) => {
      // Under the lock, the subscription is as this request will leave it: re-check what may have moved.
      const locked = await lockSubscription(em, sub.id, input.merchantId);
      if (!CHANGEABLE_STATUSES.includes(locked.status)) throw notChangeable(locked.status);
      if (locked.planId !== current.id) throw conflict("PLAN_CHANGED", "the subscription's plan changed while this request ran; retry");
      const now = ctx.clock.now();
      const open = await openSessionOf(em, locked.id);
      if (open) {
        // One whose time ran out but whose expiry job has not run yet no longer blocks: expire it here.
        if (open.expiresAt.getTime() > now.getTime()) {
          throw conflict(
            "CHANGE_SESSION_ALREADY_OPEN",
            `change session ${open.id} is still awaiting the customer's approval (until ${open.expiresAt.toISOString()})`,
          );
        }
        expireChangeSessionNow(em, ctx.clock, open);
        await em.flush();
      }
      const row = em.create(SubscriptionChangeSession, {
        id,
        subscriptionId: locked.id,
        merchantId: input.merchantId,
        tokenHash: hash,
        status: "PENDING_APPROVAL",
        currentPlanId: current.id,
        currentInterval: planInterval(current),
        currentIntervalCount: current.intervalCount,
        requestedPlanId: requested.id,
        requestedAmount: requested.amount,
        requestedCurrency: requested.currency,
        requestedInterval: planInterval(requested),
        requestedIntervalCount: requested.intervalCount,
        effectiveMode: mode,
        immediateChargeAmount: formatAmount(charge),
        proration,
        prorationAmount: null,
        successUrl: input.successUrl,
        cancelUrl: input.cancelUrl,
        reason: input.reason ?? null,
        metadata: input.metadata,
        expiresAt: new Date(now.getTime() + CHANGE_SESSION_MINUTES * 60_000),
        createdAt: now,
        updatedAt: now,
      });
      recordEvent(em, ctx.clock, { merchantId: input.merchantId, type: "subscription.change_session.created", data: changeSessionRecord(row) });
      return row;
    });
  } catch (err) {
    // The row lock serialises creates; the unique index is the last word if anything slips past it.
    if (err instanceof UniqueConstraintViolationException && String(err.message).includes("subscription_change_sessions_one_open_key")) {
      throw conflict("CHANGE_SESSION_ALREADY_OPEN", "another change session of this subscription is awaiting the customer's approval");
    }
    throw err;
  }

  await scheduleChangeSessionExpiry(ports.queues, session.id, session.expiresAt.getTime() - ctx.clock.now().getTime());
  return { session, approvalUrl: changeApprovalUrl(ports.publicBaseUrl, token) };
}

function validate(input: CreateChangeSessionInput): EffectiveMode {
  const mode = (input.effectiveMode || "NEXT_BILLING") as EffectiveMode;
  if (!EFFECTIVE_MODES.includes(mode)) throw invalid("INVALID_REQUEST", `effectiveMode: must be one of ${EFFECTIVE_MODES.join(", ")}`);
  const charge = input.immediateChargeAmount || "0";
  if (!isStorableAmountText(charge)) {
    throw invalid("INVALID_REQUEST", "immediateChargeAmount: must be a non-negative decimal string with at most 18 fraction digits and 20 integer digits");
  }
  if (mode === "NEXT_BILLING" && !isZero(amount(charge))) {
    throw invalid("INVALID_REQUEST", "immediateChargeAmount: must be 0 when effectiveMode is NEXT_BILLING (only an IMMEDIATE change charges at approval)");
  }
  for (const [field, value] of [
    ["successUrl", input.successUrl],
    ["cancelUrl", input.cancelUrl],
  ] as const) {
    if (!isHttpUrl(value)) throw invalid("INVALID_REQUEST", `${field}: must be an absolute http(s) URL of at most ${URL_MAX_LENGTH} characters`);
  }
  if (input.reason !== undefined && input.reason.length > REASON_MAX_LENGTH) {
    throw invalid("INVALID_REQUEST", `reason: must be at most ${REASON_MAX_LENGTH} characters`);
  }
  return mode;
}

/** PRORATE with IMMEDIATE computes the immediate charge when the change applies: one sent is refused. */
function validateProration(input: CreateChangeSessionInput, mode: EffectiveMode): Proration {
  const proration = (input.proration || "NONE") as Proration;
  if (!PRORATIONS.includes(proration)) throw invalid("INVALID_REQUEST", `proration: must be one of ${PRORATIONS.join(", ")}`);
  if (proration === "PRORATE" && mode === "IMMEDIATE" && input.immediateChargeAmount) {
    throw invalid(
      "INVALID_REQUEST",
      "immediateChargeAmount: must be absent with proration PRORATE and effectiveMode IMMEDIATE (it is computed when the change applies)",
    );
  }
  return proration;
}

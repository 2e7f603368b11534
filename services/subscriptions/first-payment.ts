import { DomainError } from "../platform/errors.ts";
import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ChargeOutcome } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { UseCaseContext } from "../platform/use-case.ts";
import { amount, formatAmount, isZero } from "../platform/money.ts";
import { recordEvent } from "../events/record-event.ts";
import type { PlanInterval } from "../catalog/entities.ts";
import { Subscription, SubscriptionCharge, type ChargeRow, type SubscriptionRow } from "./entities.ts";
import { periodEnd } from "./billing-calendar.ts";
import { nextStatus } from "./status-machine.ts";
import { chargeRecord, subscriptionRecord } from "./subscription-record.ts";
import { currentAuthorization, lockSubscription } from "./subscription-store.ts";
import type { SubscriptionPorts } from "./ports.ts";
import { isRenewalCharge, renewalSettled } from "./renewals/renewal-outcome.ts";
import { applyPaidChange } from "./change-sessions/apply-paid-change.ts";

/**
 * The first payment, taken when a customer approves a plan without a trial.
 *
 * Nothing is debited twice, whatever crashes where:
 *  1. a PENDING charge row is committed first (with a lease, in database time);
 *  2. the wallet is asked to move the money with the row's id as idempotency key;
 *  3. one transaction marks the row SUCCEEDED and activates the subscription
 *     (or marks it FAILED with the wallet's reason).
 * A crash after 1 or 2 leaves a PENDING row: once its lease runs out, the
 * sweep (or the customer's next try) repeats step 2 with the same key, which
 * the wallet answers with the first outcome instead of moving money again.
 * The lease outlasts the wallet call's timeout, so one key is never in two
 * calls at once. Renewals, trial conversions and retries take the same three
 * steps (renewals/renew-subscription.ts): openPeriodCharge and settleCharge
 * are shared, and the settle hands the outcome to what the charge pays for.
 */
/** A charge of `subject` holds its lease: the caller answers 409 and the client retries shortly. */
export const paymentInProgress = (subject: string) =>
  new DomainError("failed_precondition", "PAYMENT_IN_PROGRESS", `a payment for ${subject} is being processed; try again in a moment`);

export const CHARGE_LEASE_SECONDS = 30;
export const WALLET_CALL_TIMEOUT_MS = 10_000;

export interface FirstChargeTerms {
  amount: string;
  currency: string;
  asset: string;
  assetAmount: string | null;
  rate: string | null;
  interval: PlanInterval;
  intervalCount: number;
}

export type FailureReason = "INSUFFICIENT_FUNDS" | "ACCOUNT_FROZEN" | "MAXIMUM_CHARGE_EXCEEDED";
/** Renewals can also fail with CONVERSION_UNAVAILABLE: the wallet could not quote the plan's currency in the funding asset. */
export type PeriodFailureReason = FailureReason | "CONVERSION_UNAVAILABLE";

/**
 * Step 1, inside the caller's transaction (which holds the subscription lock):
 * the next attempt of period 0. Period 0 starts now; its end follows the plan.
 * With `failureReason` the attempt is recorded as refused without calling the wallet.
 */
export async function openFirstCharge(
  em: EntityManager,
  now: Date,
  sub: SubscriptionRow,
  terms: FirstChargeTerms,
  failureReason?: FailureReason,
): Promise<ChargeRow> {
  const period = { index: 0, start: now, end: periodEnd(now, terms.interval, terms.intervalCount, 1) };
  return openPeriodCharge(em, now, sub, period, terms, failureReason);
}

export interface PeriodChargeTerms {
  amount: string;
  currency: string;
  asset: string;
  assetAmount: string | null;
  rate: string | null;
}

/**
 * Step 1 for any period (the first payment's period 0, a trial's first
 * charge, a renewal, a retry), inside the caller's transaction holding the
 * subscription lock: the next attempt row of that period, PENDING with a
 * lease (the unique indexes allow one in flight and one success per period),
 * or FAILED with `failureReason` when it is refused without calling the wallet.
 */
export async function openPeriodCharge(
  em: EntityManager,
  now: Date,
  sub: SubscriptionRow,
  period: { index: number; start: Date; end: Date },
  terms: PeriodChargeTerms,
  failureReason?: PeriodFailureReason,
): Promise<ChargeRow> {
  const rows = await em.execute<{ attempt: number | null }[]>(
    "select max(attempt) as attempt from subscription_charges where subscription_id = ? and period_index = ? and change_session_id is null",
    [sub.id, period.index],
  );
  return insertChargeAttempt(em, now, sub, {
    period,
    terms,
    attempt: Number(rows[0]?.attempt ?? 0) + 1,
    failureReason,
    changeSessionId: null,
  });
}

/**
 * Writes one charge attempt row: PENDING and leased to the caller, or FAILED
 * at once when refused without asking the wallet. Period charges and a plan
 * change's immediate charge (changeSessionId set) share this one shape.
 */
export async function insertChargeAttempt(
  em: EntityManager,
  now: Date,
  sub: SubscriptionRow,
  attempt: {
    period: { index: number; start: Date; end: Date };
    terms: PeriodChargeTerms;
    attempt: number;
    failureReason?: string | undefined;
    changeSessionId: string | null;
  },
): Promise<ChargeRow> {
  const failureReason = attempt.failureReason;
  const charge = em.create(SubscriptionCharge, {
    id: randomUUID(),
    subscriptionId: sub.id,
    merchantId: sub.merchantId,
    walletUserId: sub.walletUserId,
    periodIndex: attempt.period.index,
    periodStart: attempt.period.start,
    periodEnd: attempt.period.end,
    amount: attempt.terms.amount,
    currency: attempt.terms.currency,
    asset: attempt.terms.asset,
    assetAmount: attempt.terms.assetAmount,
    rate: attempt.terms.rate,
    status: failureReason ? "FAILED" : "PENDING",
    failureReason: failureReason ?? null,
    attempt: attempt.attempt,
    walletTransactionId: null,
    createdAt: now,
    settledAt: failureReason ? now : null,
    leaseUntil: null,
    changeSessionId: attempt.changeSessionId,
  });
  await em.flush();
  if (!failureReason) await takeLease(em, charge.id);
  return charge;
}

/** Claims the row for one caller until the lease (database time) runs out; false when someone holds it. */
export async function takeLease(em: EntityManager, chargeId: string): Promise<boolean> {
  const rows = await em.execute<{ id: string }[]>(
    `update subscription_charges set lease_until = now() + make_interval(secs => ?)
      where id = ? and status = 'PENDING' and (lease_until is null or lease_until < now())
      returning id`,
    [CHARGE_LEASE_SECONDS, chargeId],
  );
  return rows.length === 1;
}

export type SettleResult =
  | { state: "in_progress" }
  | { state: "settled"; charge: ChargeRow; subscription: SubscriptionRow };

/**
 * Steps 2 and 3 for a PENDING row. `leased` says the caller already holds the
 * lease (it just opened the row); otherwise the lease is taken here and
 * "in_progress" is answered when another caller holds it.
 */
export async function settleCharge(ctx: UseCaseContext, ports: SubscriptionPorts, chargeId: string, leased: boolean): Promise<SettleResult> {
  if (!leased && !(await takeLease(ctx.em, chargeId))) {
    const current = await ctx.em.fork().findOne(SubscriptionCharge, { id: chargeId });
    if (current && current.status !== "PENDING") return settledState(ctx, current);
    return { state: "in_progress" };
  }
  const charge = await ctx.em.fork().findOneOrFail(SubscriptionCharge, { id: chargeId });
  if (charge.status !== "PENDING") return settledState(ctx, charge);

  let outcome: ChargeOutcome = ChargeOutcome.SUCCEEDED;
  let transactionId: string | null = null;
  const assetAmount = charge.assetAmount == null ? undefined : formatAmount(charge.assetAmount);
  if (assetAmount !== undefined && !isZero(amount(assetAmount))) {
    // An RPC failure leaves the row PENDING: the next settle repeats this call with the same key.
    const res = await ports.wallet.charge(
      {
        idempotencyKey: `subscription-charge-${charge.id}`,
        walletUserId: charge.walletUserId,
        merchantId: charge.merchantId,
        asset: charge.asset,
        amount: assetAmount,
        description: `subscription ${charge.subscriptionId} period ${charge.periodIndex}`,
      },
      { timeoutMs: WALLET_CALL_TIMEOUT_MS },
    );
    outcome = res.outcome;
    transactionId = res.transactionId ?? null;
  }
  if (outcome !== ChargeOutcome.SUCCEEDED && outcome !== ChargeOutcome.INSUFFICIENT_FUNDS && outcome !== ChargeOutcome.ACCOUNT_FROZEN) {
    throw new Error(`wallet answered charge ${charge.id} with unknown outcome ${outcome}`);
  }

  return ctx.em.transactional(async (em) => {
    // Lock order everywhere: subscription, then charge.
    const sub = await lockSubscription(em, charge.subscriptionId);
    const row = await em.findOneOrFail(SubscriptionCharge, { id: chargeId }, { refresh: true });
    const now = ctx.clock.now();
    if (row.status !== "PENDING") {
      if (outcome === ChargeOutcome.SUCCEEDED && row.status !== "SUCCEEDED") {
        // Only possible if a lease ran out while its holder was still calling: the ledger is the truth.
        ports.logger.error({ chargeId, status: row.status }, "wallet charged a subscription charge already settled as failed");
      }
      return { state: "settled", charge: row, subscription: sub } as const;
    }
    row.settledAt = now;
    row.leaseUntil = null;
    if (outcome !== ChargeOutcome.SUCCEEDED) {
      row.status = "FAILED";
      row.failureReason = outcome === ChargeOutcome.ACCOUNT_FROZEN ? "ACCOUNT_FROZEN" : "INSUFFICIENT_FUNDS";
      if (isRenewalCharge(sub, row)) await renewalSettled(em, ctx.clock, ports.billing, sub, row);
      return { state: "settled", charge: row, subscription: sub } as const;
    }
    row.status = "SUCCEEDED";
    row.walletTransactionId = transactionId;
    recordEvent(em, ctx.clock, {
      merchantId: sub.merchantId,
      type: "subscription.charge_succeeded",
      data: { subscriptionId: sub.id, charge: chargeRecord(row) },
    });
    if (row.changeSessionId) {
      // A plan change's immediate charge: its success approves and applies the change.
      await applyPaidChange(em, ctx.clock, sub, row, ports.logger);
    } else if (sub.status === "PENDING_APPROVAL") {
      await activate(em, ctx, sub, row, now);
    } else if (isRenewalCharge(sub, row)) {
      // A renewal, a trial's first charge or a retry (renewals/renew-subscription.ts).
      await renewalSettled(em, ctx.clock, ports.billing, sub, row);
    } else {
      // Cancel and expiry wait for a charge in flight, so this means a bug: keep the money's record.
      ports.logger.error({ chargeId, subscriptionId: sub.id, status: sub.status }, "a charge succeeded that no longer matches its subscription's billing");
    }
    return { state: "settled", charge: row, subscription: sub } as const;
  });
}

/** PENDING_APPROVAL → ACTIVE: the paid period becomes the current one; the anchor is its start. */
async function activate(em: EntityManager, ctx: UseCaseContext, sub: SubscriptionRow, charge: ChargeRow, now: Date): Promise<void> {
  const authorization = await currentAuthorization(em, sub.id);
  sub.status = nextStatus(sub.status, "approve");
  sub.fundingAsset = charge.asset;
  sub.billingAnchor = charge.periodStart;
  sub.currentPeriodStart = charge.periodStart;
  sub.currentPeriodEnd = charge.periodEnd;
  sub.nextBillingAt = charge.periodEnd;
  sub.nextPeriodIndex = charge.periodIndex + 1;
  sub.activatedAt = now;
  sub.updatedAt = now;
  if (authorization && authorization.status === "PENDING") {
    authorization.status = "APPROVED";
    authorization.approvedAt = now;
    authorization.usedAt = now;
    authorization.approvedWalletUserId = sub.walletUserId;
    authorization.fundingAsset = charge.asset;
  }
  recordEvent(em, ctx.clock, { merchantId: sub.merchantId, type: "subscription.activated", data: subscriptionRecord(sub, authorization) });
}

async function settledState(ctx: UseCaseContext, charge: ChargeRow): Promise<SettleResult> {
  const sub = await ctx.em.fork().findOneOrFail(Subscription, { id: charge.subscriptionId });
  return { state: "settled", charge, subscription: sub };
}

/**
 * The sweep's part: charges left PENDING by a crash (lease run out) are
 * finished with the same idempotency key, whatever they pay for (a first
 * payment, a renewal or retry, a plan change's immediate charge).
 */
export async function settleStaleCharges(ctx: UseCaseContext, ports: SubscriptionPorts): Promise<number> {
  const stale = await ctx.em.execute<{ id: string }[]>(
    `select id from subscription_charges
      where status = 'PENDING' and (lease_until is null or lease_until < now())
      order by created_at limit 100`,
  );
  let settled = 0;
  for (const { id } of stale) {
    try {
      const res = await settleCharge({ em: ctx.em.fork(), clock: ctx.clock }, ports, id, false);
      if (res.state === "settled") settled += 1;
    } catch (err) {
      ports.logger.warn({ err, chargeId: id }, "could not settle a pending charge; the next sweep retries");
    }
  }
  return settled;
}

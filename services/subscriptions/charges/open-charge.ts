import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { SubscriptionCharge, type ChargeRow, type SubscriptionRow } from "../entities.ts";
import { takeLease } from "./lease.ts";

/** Step 1 of the charge protocol (lease.ts): the PENDING attempt row, leased to its opener. */

export type FailureReason = "INSUFFICIENT_FUNDS" | "ACCOUNT_FROZEN" | "MAXIMUM_CHARGE_EXCEEDED";
/** Renewals can also fail with CONVERSION_UNAVAILABLE: the wallet could not quote the plan's currency in the funding asset. */
export type PeriodFailureReason = FailureReason | "CONVERSION_UNAVAILABLE";

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
 * Writes one charge attempt row: PENDING and leased to the caller (its
 * `leaseGeneration` is the fencing token the caller settles with), or FAILED
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
    leaseGeneration: 0,
    settleFailures: 0,
    nextSettleAt: null,
    parkedAt: null,
    changeSessionId: attempt.changeSessionId,
  });
  await em.flush();
  if (!failureReason) {
    const generation = await takeLease(em, charge.id);
    if (generation === null) throw new Error(`charge ${charge.id} could not be leased by its opener`);
    // A later flush in this transaction writes the same value back: harmless.
    charge.leaseGeneration = generation;
  }
  return charge;
}

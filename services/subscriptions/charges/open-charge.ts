import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { LEASED_INSERT, takeLease } from "../../platform/wallet-calls/wallet-call.ts";
import type { ChargePurpose } from "../contract.ts";
import { SubscriptionCharge, type ChargeRow, type SubscriptionRow } from "../entities.ts";
import { CHARGES_TABLE } from "./charge-ports.ts";
import { insertLeasedRenewalCharges, lastPeriodAttempt } from "./charge-store.ts";

/** Step 1 of the wallet-call protocol (platform/wallet-calls/wallet-call.ts) for charges: the PENDING attempt row, leased to its opener. */

export type FailureReason = "INSUFFICIENT_FUNDS" | "ACCOUNT_FROZEN" | "MAXIMUM_CHARGE_EXCEEDED";
/** Renewals can also fail with CONVERSION_UNAVAILABLE: the wallet could not quote the plan's currency in the funding asset. */
export type PeriodFailureReason = FailureReason | "CONVERSION_UNAVAILABLE";

export interface PeriodChargeTerms {
  amount: string;
  currency: string;
  asset: string;
  assetAmount: string | null;
  rate: string | null;
  /** When the rate was observed (the receipt shows it). */
  rateAt?: Date | null | undefined;
  /** The price's parts (pricing/period-price.ts); absent: amount is the subtotal, nothing off. */
  subtotal?: string | undefined;
  discountAmount?: string | undefined;
  creditApplied?: string | undefined;
  couponId?: string | null | undefined;
}

/**
 * Step 1 for any period (the first payment's period 0, a trial's first
 * charge, a renewal, a retry), inside the caller's transaction holding the
 * subscription lock: the next attempt row of that period, PENDING with a
 * lease (the unique indexes allow one in flight and one success per period),
 * or FAILED with `failureReason` when it is refused without calling the wallet.
 *
 * `maxAttempts`: the period's attempt budget (renewals: 1 + the merchant's
 * retry days). This is the one place a period charge is opened, whatever
 * asked for it (the schedule, a top-up, a new funding asset, a fallback):
 * when the period has had its attempts, nothing is opened and
 * "budget_used" is answered (the caller ends dunning).
 */
export async function openPeriodCharge(
  em: EntityManager,
  now: Date,
  purpose: "FIRST_PAYMENT" | "RENEWAL",
  sub: SubscriptionRow,
  period: { index: number; start: Date; end: Date },
  terms: PeriodChargeTerms,
  failureReason?: PeriodFailureReason,
  maxAttempts = Number.POSITIVE_INFINITY,
  fundedByFallback = false,
): Promise<ChargeRow | "budget_used"> {
  const attempt = (await lastPeriodAttempt(em, sub.id, period.index)) + 1;
  if (!withinBudget(attempt, maxAttempts)) return "budget_used";
  return insertChargeAttempt(em, now, sub, { purpose, period, terms, attempt, failureReason, changeSessionId: null, fundedByFallback });
}

/** The attempt budget rule, shared by the single and the set-based open: attempt n of a period is allowed while n <= maxAttempts. */
export const withinBudget = (attempt: number, maxAttempts: number): boolean => attempt <= maxAttempts;

/** What one charge attempt row is opened with. */
interface ChargeAttemptSpec {
  purpose: ChargePurpose;
  sub: SubscriptionRow;
  period: { index: number; start: Date; end: Date };
  terms: PeriodChargeTerms;
  attempt: number;
  failureReason?: string | undefined;
  changeSessionId: string | null;
  /** Paid from one of the subscription's fallback assets (terms.asset is that asset). */
  fundedByFallback?: boolean | undefined;
}

/** The row of a new charge attempt (PENDING, or FAILED at once with its reason); the lease is taken separately. */
function chargeAttemptRow(spec: ChargeAttemptSpec, now: Date): ChargeRow {
  const failureReason = spec.failureReason;
  return {
    id: randomUUID(),
    subscriptionId: spec.sub.id,
    merchantId: spec.sub.merchantId,
    walletUserId: spec.sub.walletUserId,
    periodIndex: spec.period.index,
    periodStart: spec.period.start,
    periodEnd: spec.period.end,
    amount: spec.terms.amount,
    subtotal: spec.terms.subtotal ?? spec.terms.amount,
    discountAmount: spec.terms.discountAmount ?? "0",
    creditApplied: spec.terms.creditApplied ?? "0",
    couponId: spec.terms.couponId ?? null,
    rateAt: spec.terms.rateAt ?? null,
    receiptNumber: null,
    receiptToken: null,
    receiptUrl: null,
    currency: spec.terms.currency,
    asset: spec.terms.asset,
    assetAmount: spec.terms.assetAmount,
    rate: spec.terms.rate,
    status: failureReason ? "FAILED" : "PENDING",
    failureReason: failureReason ?? null,
    attempt: spec.attempt,
    walletTransactionId: null,
    createdAt: now,
    settledAt: failureReason ? now : null,
    leaseUntil: null,
    leaseGeneration: 0,
    settleFailures: 0,
    nextSettleAt: null,
    parkedAt: null,
    changeSessionId: spec.changeSessionId,
    purpose: spec.purpose,
    fundedByFallback: spec.fundedByFallback === true,
    lastError: null,
  } as ChargeRow;
}

/**
 * Writes one charge attempt row: PENDING and leased to the caller (its
 * `leaseGeneration` is the fencing token the caller settles with), or FAILED
 * at once when refused without asking the wallet. Period charges and a plan
 * change's immediate charge (changeSessionId set) share this one shape.
 */
export async function insertChargeAttempt(em: EntityManager, now: Date, sub: SubscriptionRow, attempt: Omit<ChargeAttemptSpec, "sub">): Promise<ChargeRow> {
  const charge = em.create(SubscriptionCharge, chargeAttemptRow({ sub, ...attempt }, now));
  await em.flush();
  if (charge.status === "PENDING") {
    const generation = await takeLease(em, CHARGES_TABLE, charge.id);
    if (generation === null) throw new Error(`charge ${charge.id} could not be leased by its opener`);
    // A later flush in this transaction writes the same value back: harmless.
    charge.leaseGeneration = generation;
  }
  return charge;
}

/**
 * Step 1 for a renewal batch (renewals only): the same PENDING rows, written already leased
 * to their opener (lease_until from database time, lease_generation 1) in one
 * statement for the set: one row write each instead of an insert and a lease
 * update, and no entity to track. Returns the rows as written (leaseUntil is
 * the database's; the generation is what the settle is fenced with).
 */
export async function openLeasedCharges(
  em: EntityManager,
  now: Date,
  specs: (Omit<ChargeAttemptSpec, "failureReason" | "changeSessionId" | "purpose" | "fundedByFallback"> & { maxAttempts: number })[],
): Promise<ChargeRow[]> {
  if (specs.length === 0) return [];
  // The caller sends a subscription whose period has had its attempts to the one-by-one path (openPeriodCharge); this is the guard.
  const over = specs.find((s) => !withinBudget(s.attempt, s.maxAttempts));
  if (over) throw new Error(`subscription ${over.sub.id}: attempt ${over.attempt} of period ${over.period.index} is over its budget of ${over.maxAttempts}`);
  const rows = specs.map((spec) => ({
    ...chargeAttemptRow({ ...spec, purpose: "RENEWAL", changeSessionId: null }, now),
    leaseGeneration: LEASED_INSERT.generation,
  }));
  await insertLeasedRenewalCharges(em, rows);
  return rows;
}

import type { EntityManager } from "@mikro-orm/postgresql";
import type { ChargeRow, SubscriptionRow } from "../entities.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";
import { periodEnd } from "../billing-calendar.ts";
import { insertChargeAttempt, type FailureReason } from "../charges/open-charge.ts";
import { lastChangeChargeAttempt, lastPaidPeriodIndex } from "./change-session-store.ts";

interface ChangeChargeTerms {
  amount: string;
  currency: string;
  asset: string;
  assetAmount: string;
  rate: string;
  rateAt?: Date | undefined;
}

/**
 * Step 1 of the charge protocol (platform/wallet-calls/wallet-call.ts) for a plan change's
 * immediate charge, inside the caller's transaction (subscription and session
 * locked): the next attempt row, PENDING with a lease, committed before the
 * wallet is called with the row's id as idempotency key; settleCharge then
 * does steps 2 and 3 exactly as for a first payment, and its success applies
 * the change (apply-paid-change.ts). The row is labelled with the period it
 * was paid in (the current one) but is not that period's charge: the
 * per-period uniqueness rules skip rows with a change_session_id (0007).
 * With `failureReason` the attempt is recorded as refused without calling the wallet.
 */
export async function openChangeCharge(
  em: EntityManager,
  now: Date,
  sub: SubscriptionRow,
  session: ChangeSessionRow,
  terms: ChangeChargeTerms,
  failureReason?: FailureReason,
): Promise<ChargeRow> {
  const [lastAttempt, period] = await Promise.all([lastChangeChargeAttempt(em, session.id), lastPaidPeriodIndex(em, sub.id)]);
  const start = sub.currentPeriodStart ?? now;
  const end =
    sub.currentPeriodEnd && sub.currentPeriodEnd > start
      ? sub.currentPeriodEnd
      : periodEnd(start, session.requestedInterval, session.requestedIntervalCount, 1);
  return insertChargeAttempt(em, now, sub, {
    purpose: "PLAN_CHANGE",
    period: { index: period, start, end },
    terms,
    attempt: lastAttempt + 1,
    failureReason,
    changeSessionId: session.id,
  });
}

import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../platform/clock.ts";
import { recordEvent } from "../events/record-event.ts";
import type { PlanInterval } from "../catalog/entities.ts";
import type { ChargeRow, SubscriptionRow } from "./entities.ts";
import { periodEnd } from "./billing-calendar.ts";
import { nextStatus } from "./status-machine.ts";
import { subscriptionRecord } from "./subscription-record.ts";
import { currentAuthorization } from "./subscription-store.ts";
import { openPeriodCharge, type FailureReason, type PeriodChargeTerms } from "./charges/open-charge.ts";
import { markAuthorization } from "./authorization-status.ts";
import { touch } from "../platform/record-version.ts";

/**
 * The first payment, taken when a customer approves a plan without a trial.
 * It is a charge like any other (platform/wallet-calls/wallet-call.ts: open, idempotent wallet
 * charge, fenced settle); what is particular to it is its period (0, starting
 * now) and what its success does: the subscription becomes ACTIVE.
 */
export interface FirstChargeTerms extends PeriodChargeTerms {
  interval: PlanInterval;
  intervalCount: number;
}

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
  // No budget: an approval's first payment may be tried again by the customer until it is paid or the link ends.
  const charge = await openPeriodCharge(em, now, "FIRST_PAYMENT", sub, period, terms, failureReason);
  if (charge === "budget_used") throw new Error("a first payment has no attempt budget");
  return charge;
}

/** PENDING_APPROVAL → ACTIVE on the first payment's success: the paid period becomes the current one; the anchor is its start. */
export async function activateOnFirstPayment(em: EntityManager, clock: Clock, sub: SubscriptionRow, charge: ChargeRow, now: Date): Promise<void> {
  const authorization = await currentAuthorization(em, sub.id);
  sub.status = nextStatus(sub.status, "approve");
  sub.fundingAsset = charge.asset;
  sub.billingAnchor = charge.periodStart;
  sub.currentPeriodStart = charge.periodStart;
  sub.currentPeriodEnd = charge.periodEnd;
  sub.nextBillingAt = charge.periodEnd;
  sub.nextPeriodIndex = charge.periodIndex + 1;
  sub.activatedAt = now;
  touch(sub, now);
  if (authorization && authorization.status === "PENDING") {
    markAuthorization(authorization, "approve", now);
    authorization.approvedWalletUserId = sub.walletUserId;
    authorization.fundingAsset = charge.asset;
  }
  recordEvent(em, clock, { merchantId: sub.merchantId, type: "subscription.activated", data: subscriptionRecord(sub, authorization) });
}

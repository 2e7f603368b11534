import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../../platform/clock.ts";
import { recordEvent } from "../../events/record-event.ts";
import type { AuthorizationRow, ChargeRow, SubscriptionRow } from "../entities.ts";
import { nextStatus } from "../status-machine.ts";
import { chargeRecord, subscriptionRecord } from "../subscription-record.ts";
import { currentAuthorization } from "../subscription-store.ts";
import { cancelChangeSessionsOf } from "../change-sessions/cancel-change-sessions.ts";
import { attemptBudget, DAY_MS, type BillingPolicy } from "./billing-policy.ts";
import { recordCancellation } from "../subscription-moves.ts";
import { touch } from "../../platform/record-version.ts";

/** Statuses the renewal engine charges in. */
const BILLABLE_STATUSES: readonly string[] = ["ACTIVE", "TRIALING", "PAST_DUE"];

/**
 * True when a charge pays the period the subscription is billing now (a
 * renewal, a trial's first charge or a retry), as opposed to the first
 * payment of a subscription awaiting approval or a plan change's immediate charge.
 */
export function isRenewalCharge(sub: SubscriptionRow, charge: ChargeRow): boolean {
  return sub.status !== "PENDING_APPROVAL" && charge.changeSessionId == null && charge.periodIndex === sub.nextPeriodIndex;
}

/**
 * Applies a settled renewal charge to its subscription, inside the settling
 * transaction (subscription row locked, charge row already SUCCEEDED or
 * FAILED; subscription.charge_succeeded is recorded by the settle itself).
 *
 * Paid: the charge's period becomes the current one and the next billing date
 * its end; ACTIVE (from TRIALING: subscription.activated, the first paid
 * period; otherwise subscription.renewed, which is also how a PAST_DUE
 * subscription comes back). A charge that lands on a subscription paused
 * meanwhile still pays its period; the subscription stays paused.
 *
 * Failed: subscription.charge_failed; the first failure of a period makes the
 * subscription PAST_DUE (subscription.past_due) and schedules the retries
 * at pastDueSince + each of policy.retryDays. A failed scheduled retry moves
 * to the next one. A retry made early (a top-up, a new funding asset) that
 * fails leaves the schedule as it was. Whatever triggered it, every attempt
 * counts against the period's budget (1 + retry days, attemptBudget): the
 * failure that uses the last attempt, or one after which the schedule has no
 * retry left, ends dunning: UNPAID (subscription.unpaid) or CANCELLED
 * (subscription.cancelled, reason PAYMENT_FAILED) per policy. `policy` is
 * the merchant's as it stands now: a settings change applies from the next
 * decision on (a retry date already scheduled is kept).
 *
 * `authorization`: the subscription's current authorization when the caller
 * has read it already (a renewal batch reads them in one query); the events
 * carry it. Undefined: read here when an event needs it.
 */
export async function renewalSettled(
  em: EntityManager,
  clock: Clock,
  policy: BillingPolicy,
  sub: SubscriptionRow,
  charge: ChargeRow,
  authorization?: AuthorizationRow | null,
): Promise<void> {
  const now = clock.now();
  const authorizationOf = async () => (authorization === undefined ? currentAuthorization(em, sub.id) : authorization);
  if (charge.status === "SUCCEEDED") await paid(em, clock, sub, charge, now, authorizationOf);
  else if (charge.status === "FAILED") {
    // Recorded before dunning's own event, with the version this commit leaves the subscription at.
    const data = { subscriptionId: sub.id, subscriptionVersion: sub.version, charge: chargeRecord(charge) };
    recordEvent(em, clock, { merchantId: sub.merchantId, type: "subscription.charge_failed", data });
    await failed(em, clock, policy, sub, charge.attempt, now, authorizationOf);
    data.subscriptionVersion = sub.version;
  }
}

type AuthorizationOf = () => Promise<AuthorizationRow | null>;

async function paid(em: EntityManager, clock: Clock, sub: SubscriptionRow, charge: ChargeRow, now: Date, authorizationOf: AuthorizationOf): Promise<void> {
  if (!BILLABLE_STATUSES.includes(sub.status) && sub.status !== "PAUSED") return;
  sub.currentPeriodStart = charge.periodStart;
  sub.currentPeriodEnd = charge.periodEnd;
  sub.nextBillingAt = charge.periodEnd;
  sub.nextPeriodIndex = charge.periodIndex + 1;
  sub.pastDueSince = null;
  sub.retryCount = 0;
  sub.nextRetryAt = null;
  touch(sub, now);
  if (sub.status === "PAUSED") return;
  const from = sub.status;
  sub.status = nextStatus(from, "charge_succeeded");
  const authorization = await authorizationOf();
  recordEvent(em, clock, {
    merchantId: sub.merchantId,
    type: from === "TRIALING" ? "subscription.activated" : "subscription.renewed",
    data: subscriptionRecord(sub, authorization),
  });
}

async function failed(
  em: EntityManager,
  clock: Clock,
  policy: BillingPolicy,
  sub: SubscriptionRow,
  attemptsMade: number,
  now: Date,
  authorizationOf: AuthorizationOf,
): Promise<void> {
  if (!BILLABLE_STATUSES.includes(sub.status)) return;
  const from = sub.status;
  touch(sub, now);
  if (from !== "PAST_DUE") {
    sub.status = nextStatus(from, "charge_failed");
    sub.pastDueSince = now;
    sub.retryCount = 0;
    sub.nextRetryAt = retryAt(sub, policy, 0);
    await recordWithSubscription(em, clock, sub, "subscription.past_due", authorizationOf);
    if (attemptsMade >= attemptBudget(policy) || !sub.nextRetryAt) await retriesExhausted(em, clock, policy, sub, now, authorizationOf);
    return;
  }
  const early = sub.nextRetryAt != null && now.getTime() < sub.nextRetryAt.getTime();
  if (!early) sub.retryCount += 1;
  const next = retryAt(sub, policy, sub.retryCount);
  if (attemptsMade >= attemptBudget(policy) || next === null) {
    await retriesExhausted(em, clock, policy, sub, now, authorizationOf);
    return;
  }
  // An early retry keeps the date already scheduled; a scheduled one moves to the next date of the (current) schedule.
  if (!early) sub.nextRetryAt = next;
  sub.status = nextStatus(from, "charge_failed");
}

/**
 * The period's attempts are used up (or the schedule, shortened by a
 * settings change, has no retry left): UNPAID or CANCELLED per policy.
 * Also called by the open step when a retry comes due with no attempt left
 * (the budget shrank after it was scheduled): nothing is charged then.
 */
export async function retriesExhausted(
  em: EntityManager,
  clock: Clock,
  policy: BillingPolicy,
  sub: SubscriptionRow,
  now: Date,
  authorizationOf: AuthorizationOf = () => currentAuthorization(em, sub.id),
): Promise<void> {
  const from = sub.status;
  touch(sub, now);
  sub.nextRetryAt = null;
  if (policy.finalStatus === "UNPAID") {
    sub.status = nextStatus(from, "retries_exhausted");
    sub.unpaidAt = now;
    await recordWithSubscription(em, clock, sub, "subscription.unpaid", authorizationOf);
  } else {
    sub.status = nextStatus(from, "retries_exhausted_cancel");
    recordCancellation(sub, now, "PAYMENT_FAILED");
    await recordWithSubscription(em, clock, sub, "subscription.cancelled", authorizationOf);
    // As a merchant's cancel does: a scheduled plan change (or one awaiting approval) ends with it, in this transaction.
    await cancelChangeSessionsOf(em, clock, sub.id, now);
  }
}

/** Retry k (0-based) of the current dunning run; null when the schedule has no retry k. */
function retryAt(sub: SubscriptionRow, policy: BillingPolicy, k: number): Date | null {
  const days = policy.retryDays[k];
  if (days === undefined || !sub.pastDueSince) return null;
  return new Date(sub.pastDueSince.getTime() + days * DAY_MS);
}

async function recordWithSubscription(
  em: EntityManager,
  clock: Clock,
  sub: SubscriptionRow,
  type: "subscription.past_due" | "subscription.unpaid" | "subscription.cancelled",
  authorizationOf: AuthorizationOf,
): Promise<void> {
  const authorization = await authorizationOf();
  recordEvent(em, clock, { merchantId: sub.merchantId, type, data: subscriptionRecord(sub, authorization) });
}

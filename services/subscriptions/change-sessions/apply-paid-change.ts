import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../../platform/clock.ts";
import type { Logger } from "../../platform/logger.ts";
import { formatAmount } from "../../platform/money.ts";
import { recordEvent } from "../../events/record-event.ts";
import { touch } from "../../platform/record-version.ts";
import type { ChargeRow, SubscriptionRow } from "../entities.ts";
import { openAutomaticRefund } from "../refunds/automatic-refund.ts";
import { lockChangeSession } from "./change-session-store.ts";
import { changeSessionMachine } from "./change-session-status-machine.ts";
import { changeSessionRecord } from "./change-session-record.ts";
import { changeableRefusal } from "./changeable-refusal.ts";
import { switchPlan } from "./switch-plan.ts";

/**
 * settleCharge's success step for an immediate plan-change charge, in its
 * transaction (subscription locked, charge just marked SUCCEEDED): the
 * session is approved and applied and the subscription switches plan, with
 * the charge's success — if the session still applies to the subscription as
 * it is now. The approval checked that when it opened the charge, but the
 * settle may come later (a crash finished by the sweep, a stalled wallet
 * call), after a scheduled change switched the plan, a failed renewal made the
 * subscription PAST_DUE or dunning cancelled it (and its sessions).
 *
 * Then the money is not kept: the charge stays SUCCEEDED (the wallet moved
 * it; the ledger and the charge agree), the session ends CANCELLED with
 * reason SUBSCRIPTION_CHANGED (if it was still awaiting approval), and a
 * refund of the whole charge is written in this same transaction, to be
 * settled by whoever waits for the answer or by the subscriptions sweep
 * (refunds/automatic-refund.ts). The merchant sees both as events
 * (change_session.cancelled, then charge_refunded).
 */
export async function applyPaidChange(em: EntityManager, clock: Clock, sub: SubscriptionRow, charge: ChargeRow, logger: Logger): Promise<void> {
  const session = await lockChangeSession(em, charge.changeSessionId!);
  const awaiting = session.status === "PENDING_APPROVAL";
  // The charge prorated the period it was opened in: once a renewal has moved the subscription past it, it pays for nothing.
  const periodEnded = sub.currentPeriodStart != null && charge.periodStart.getTime() !== sub.currentPeriodStart.getTime();
  const refused = !awaiting
    ? { refusal: session.status, message: `the change session is ${session.status}` }
    : (changeableRefusal(session, sub) ?? (periodEnded ? { refusal: "PERIOD_ENDED", message: "the period this change was priced for has ended" } : undefined));
  if (!refused) {
    session.chargeId = charge.id;
    await switchPlan(em, clock, sub, session, "approve_immediate");
    return;
  }

  const now = clock.now();
  if (awaiting) {
    session.status = changeSessionMachine.next(session.status, "cancel");
    session.cancellationReason = "SUBSCRIPTION_CHANGED";
    session.cancelledAt = now;
    session.chargeId = charge.id;
    touch(session, now);
    recordEvent(em, clock, { merchantId: session.merchantId, type: "subscription.change_session.cancelled", data: changeSessionRecord(session) });
  }
  const refund = openAutomaticRefund(em, clock, charge, `automatic: the plan change it paid for was not applied (${refused.refusal})`, {
    changeSessionId: session.id,
  });
  logger.warn(
    { chargeId: charge.id, changeSessionId: session.id, refusal: refused.refusal, refundId: refund?.id, amount: formatAmount(charge.amount) },
    "immediate plan-change charge succeeded on a change that no longer applies: change not applied, charge refunded",
  );
}

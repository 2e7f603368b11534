import { paymentInProgress } from "../charges/charge-ports.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { recordEvent } from "../../events/record-event.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";
import { changeSessionMachine } from "./change-session-status-machine.ts";
import { changeSessionRecord } from "./change-session-record.ts";
import { findChangeSession, lockChangeSession, pendingSessionCharge } from "./change-session-store.ts";
import { lockSubscription } from "../subscription-store.ts";
import { touch } from "../../platform/record-version.ts";

/**
 * The merchant withdraws a proposal: a session awaiting approval, or a
 * scheduled change not yet applied, becomes CANCELLED (reason
 * MERCHANT_CANCELLED). Locks in the usual order (subscription, session); an
 * immediate charge being taken for it refuses the cancel, as the approval
 * then decides the outcome (409 PAYMENT_IN_PROGRESS, retry in a moment).
 */
export async function cancelChangeSession(
  ctx: UseCaseContext,
  input: { merchantId: string; subscriptionId: string; sessionId: string },
): Promise<ChangeSessionRow> {
  return ctx.em.transactional(async (em) => {
    const sub = await lockSubscription(em, input.subscriptionId, input.merchantId);
    const session = await lockChangeSession(em, (await findChangeSession(em, input.merchantId, sub.id, input.sessionId)).id);
    if (await pendingSessionCharge(em, session.id)) {
      throw paymentInProgress("this change");
    }
    const now = ctx.clock.now();
    session.status = changeSessionMachine.next(session.status, "cancel");
    session.cancellationReason = "MERCHANT_CANCELLED";
    session.cancelledAt = now;
    touch(session, now);
    recordEvent(em, ctx.clock, { merchantId: session.merchantId, type: "subscription.change_session.cancelled", data: changeSessionRecord(session) });
    return session;
  });
}

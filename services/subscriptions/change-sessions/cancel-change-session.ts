import type { UseCaseContext } from "../../platform/use-case.ts";
import { DomainError } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { recordEvent } from "../../events/record-event.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";
import { nextChangeStatus } from "./change-session-status-machine.ts";
import { changeSessionRecord } from "./change-session-record.ts";
import { changeSessionNotFound, lockChangeSession } from "./change-session-store.ts";
import { lockSubscription } from "../subscription-store.ts";

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
    if (!isUuid(input.sessionId)) throw changeSessionNotFound(input.sessionId);
    const found = await em.execute<{ id: string }[]>(
      "select id from subscription_change_sessions where id = ? and subscription_id = ? and merchant_id = ?",
      [input.sessionId, sub.id, input.merchantId],
    );
    if (!found[0]) throw changeSessionNotFound(input.sessionId);
    const session = await lockChangeSession(em, input.sessionId);
    const paying = await em.execute<{ n: number }[]>(
      "select count(*)::int as n from subscription_charges where change_session_id = ? and status = 'PENDING'",
      [session.id],
    );
    if (Number(paying[0]?.n ?? 0) > 0) {
      throw new DomainError("failed_precondition", "PAYMENT_IN_PROGRESS", "a payment for this change is being processed; try again in a moment");
    }
    const now = ctx.clock.now();
    session.status = nextChangeStatus(session.status, "cancel");
    session.cancellationReason = "MERCHANT_CANCELLED";
    session.cancelledAt = now;
    session.updatedAt = now;
    recordEvent(em, ctx.clock, { merchantId: session.merchantId, type: "subscription.change_session.cancelled", data: changeSessionRecord(session) });
    return session;
  });
}

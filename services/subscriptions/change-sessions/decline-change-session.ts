import { paymentInProgress } from "../charges/charge-ports.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { recordEvent } from "../../events/record-event.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";
import { changeSessionMachine } from "./change-session-status-machine.ts";
import { changeSessionRecord } from "./change-session-record.ts";
import { assertChangeAnswerable, findByChangeToken, lockChangeSession, pendingSessionCharge } from "./change-session-store.ts";
import { lockSubscription } from "../subscription-store.ts";
import { touch } from "../../platform/record-version.ts";

/**
 * The customer pressed Cancel on the hosted page: PENDING_APPROVAL →
 * DECLINED with subscription.change_session.declined; the subscription is
 * untouched. Refused while an immediate charge is in flight, so a decline can
 * never race a debit.
 */
export async function declineChangeSession(ctx: UseCaseContext, token: string): Promise<ChangeSessionRow> {
  const { session: found } = await findByChangeToken(ctx.em, token);
  return ctx.em.transactional(async (em) => {
    await lockSubscription(em, found.subscriptionId);
    const session = await lockChangeSession(em, found.id);
    const now = ctx.clock.now();
    assertChangeAnswerable(session, now);
    if (await pendingSessionCharge(em, session.id)) {
      throw paymentInProgress("this change");
    }
    session.status = changeSessionMachine.next(session.status, "decline");
    session.declinedAt = now;
    touch(session, now);
    recordEvent(em, ctx.clock, { merchantId: session.merchantId, type: "subscription.change_session.declined", data: changeSessionRecord(session) });
    return session;
  });
}

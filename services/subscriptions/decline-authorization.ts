import { paymentInProgress } from "./charges/charge-ports.ts";
import type { UseCaseContext } from "../platform/use-case.ts";
import { recordEvent } from "../events/record-event.ts";
import { nextStatus } from "./status-machine.ts";
import { subscriptionRecord } from "./subscription-record.ts";
import { currentAuthorization, lockSubscription, pendingFirstCharge } from "./subscription-store.ts";
import { assertAnswerable, findByToken } from "./authorization-lookup.ts";
import { recordCancellation } from "./subscription-moves.ts";
import { markAuthorization } from "./authorization-status.ts";
import { touch } from "../platform/record-version.ts";

/**
 * The customer pressed Cancel on the hosted page: the authorization is
 * DECLINED (and used up) and the subscription CANCELLED, with one event,
 * subscription.authorization_declined. Refused while a first payment is in
 * flight, so a decline can never race a debit.
 */
export async function declineAuthorization(ctx: UseCaseContext, token: string) {
  const { subscription } = await findByToken(ctx.em, token);
  return ctx.em.transactional(async (em) => {
    const sub = await lockSubscription(em, subscription.id);
    const authorization = await currentAuthorization(em, sub.id);
    if (!authorization) throw new Error(`subscription ${sub.id} has no authorization`);
    const now = ctx.clock.now();
    assertAnswerable(authorization, sub, now);
    if (await pendingFirstCharge(em, sub.id)) {
      throw paymentInProgress("this authorization");
    }
    sub.status = nextStatus(sub.status, "decline");
    markAuthorization(authorization, "decline", now);
    recordCancellation(sub, now, "AUTHORIZATION_DECLINED");
    touch(sub, now);
    recordEvent(em, ctx.clock, { merchantId: sub.merchantId, type: "subscription.authorization_declined", data: subscriptionRecord(sub, authorization) });
    return { subscription: sub, authorization };
  });
}

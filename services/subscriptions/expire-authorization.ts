import type { UseCaseContext } from "../platform/use-case.ts";
import { DomainError } from "../platform/errors.ts";
import { recordEvent, recordEvents } from "../events/record-event.ts";
import { nextStatus } from "./status-machine.ts";
import { subscriptionRecord } from "./subscription-record.ts";
import { currentAuthorization, lockSubscription, pendingFirstCharge, splitWithAuthorization, withAuthorizationColumns } from "./subscription-store.ts";
import { BUMP_VERSION, touch } from "../platform/record-version.ts";

/**
 * Moves a subscription whose authorization ran out to EXPIRED. Safe to run
 * any number of times and concurrently (the job, the sweep and an operator may
 * all try): under the row lock it acts only if the subscription still awaits
 * approval and its authorization is pending and due on the service clock, so
 * an approved, declined or already expired one is left alone. A first payment
 * still in flight wins: the sweep settles it, then reconsiders.
 * Returns true when this call expired it.
 */
export async function expireAuthorization(ctx: UseCaseContext, subscriptionId: string): Promise<boolean> {
  return ctx.em.transactional(async (em) => {
    const sub = await lockSubscription(em, subscriptionId).catch((err: unknown) => {
      // A job for a subscription that does not exist (any more) has nothing to do.
      if (err instanceof DomainError && err.kind === "not_found") return null;
      throw err;
    });
    if (!sub || sub.status !== "PENDING_APPROVAL") return false;
    const authorization = await currentAuthorization(em, sub.id);
    const now = ctx.clock.now();
    if (!authorization || authorization.status !== "PENDING" || authorization.expiresAt.getTime() > now.getTime()) return false;
    if (await pendingFirstCharge(em, sub.id)) return false;

    sub.status = nextStatus(sub.status, "expire");
    sub.expiredAt = now;
    touch(sub, now);
    authorization.status = "EXPIRED";
    authorization.expiredAt = now;
    recordEvent(em, ctx.clock, { merchantId: sub.merchantId, type: "subscription.expired", data: subscriptionRecord(sub, authorization) });
    return true;
  });
}

export const EXPIRY_BATCH = 500;

/**
 * The sweep behind the delayed jobs: every pending authorization due on the
 * service clock (sandbox advances included), oldest first, set-based: per
 * batch one statement claims the due rows (`for update skip locked`: two
 * sweeps, or a sweep and a job, never walk the same rows; a row being
 * approved right now is skipped and reconsidered next time), expires them
 * under the same rules as expireAuthorization (still awaiting approval, the
 * subscription's current authorization, no first payment in flight) and
 * returns the expired records; a second statement records their events, in
 * the same transaction. No ORM entity is made: hydrating, tracking and
 * flushing 500 subscriptions, 500 authorizations and 500 events cost about
 * three quarters of the sweep's CPU. Two lanes run at once.
 */
export async function expireDueAuthorizations(ctx: UseCaseContext): Promise<number> {
  // Two lanes at once: skip locked hands each its own rows, so a large backlog drains on two connections.
  const lanes = await Promise.all(Array.from({ length: EXPIRY_LANES }, () => expireLane(ctx)));
  return lanes.reduce((a, b) => a + b, 0);
}

const EXPIRY_LANES = 2;

async function expireLane(ctx: UseCaseContext): Promise<number> {
  let expired = 0;
  for (;;) {
    const count = await ctx.em.fork().transactional(async (em) => {
      const now = ctx.clock.now();
      const columns = withAuthorizationColumns(em, "subs", "auths");
      const rows = await em.execute<Record<string, unknown>[]>(
        `with due as (
           select a.id as authorization_id, s.id as subscription_id
             from subscription_authorizations a
             join subscriptions s on s.id = a.subscription_id
            where a.status = 'PENDING' and a.expires_at <= ? and s.status = ?
              and not exists (select 1 from subscription_authorizations newer
                               where newer.subscription_id = a.subscription_id
                                 and (newer.created_at, newer.id) > (a.created_at, a.id))
              and not exists (select 1 from subscription_charges c
                               where c.subscription_id = s.id and c.period_index = 0 and c.status = 'PENDING')
            order by a.expires_at
            limit ?
            for update of a, s skip locked
         ), auths as (
           update subscription_authorizations a set status = 'EXPIRED', expired_at = ?
             from due where a.id = due.authorization_id
           returning a.*
         ), subs as (
           update subscriptions s set status = ?, expired_at = ?, updated_at = ?, ${BUMP_VERSION}
             from due where s.id = due.subscription_id
           returning s.*
         )
         select ${columns.subscription}, ${columns.authorization}
           from subs join auths on auths.subscription_id = subs.id
          order by subs.id`,
        [now, "PENDING_APPROVAL", EXPIRY_BATCH, now, nextStatus("PENDING_APPROVAL", "expire"), now, now],
      );
      // The current authorization is the one expired (the claim took no other): each row is a whole record.
      const events = rows.map((row) => {
        const { subscription, authorization } = splitWithAuthorization(row, em);
        return { merchantId: subscription.merchantId, type: "subscription.expired" as const, data: subscriptionRecord(subscription, authorization) };
      });
      await recordEvents(em, ctx.clock, events);
      return rows.length;
    });
    expired += count;
    if (count < EXPIRY_BATCH) break;
  }
  return expired;
}

import type { UseCaseContext } from "../platform/use-case.ts";
import { DomainError } from "../platform/errors.ts";
import { recordEvent } from "../events/record-event.ts";
import { nextStatus } from "./status-machine.ts";
import { subscriptionRecord } from "./subscription-record.ts";
import { currentAuthorization, currentAuthorizations, lockSubscription, pendingFirstCharge } from "./subscription-store.ts";
import { Subscription } from "./entities.ts";
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
 * approved right now is skipped and reconsidered next time) and expires them
 * under the same rules as expireAuthorization (still awaiting approval, the
 * subscription's current authorization, no first payment in flight); then
 * the expired records are read back and their events recorded, in the same
 * transaction. A handful of statements per batch instead of ~8 per
 * subscription; two lanes run at once.
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
      const rows = await em.execute<{ subscription_id: string }[]>(
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
           returning a.id
         )
         update subscriptions s set status = ?, expired_at = ?, updated_at = ?, ${BUMP_VERSION}
           from due where s.id = due.subscription_id
         returning s.id as subscription_id`,
        [now, "PENDING_APPROVAL", EXPIRY_BATCH, now, nextStatus("PENDING_APPROVAL", "expire"), now, now],
      );
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => r.subscription_id);
      const subs = await em.find(Subscription, { id: { $in: ids } });
      const authorizations = await currentAuthorizations(em, ids);
      for (const sub of subs) {
        recordEvent(em, ctx.clock, { merchantId: sub.merchantId, type: "subscription.expired", data: subscriptionRecord(sub, authorizations.get(sub.id) ?? null) });
      }
      return rows.length;
    });
    expired += count;
    if (count < EXPIRY_BATCH) break;
  }
  return expired;
}

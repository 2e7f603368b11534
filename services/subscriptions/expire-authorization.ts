import type { UseCaseContext } from "../platform/use-case.ts";
import { DomainError } from "../platform/errors.ts";
import { recordEvent } from "../events/record-event.ts";
import { nextStatus } from "./status-machine.ts";
import { subscriptionRecord } from "./subscription-record.ts";
import { currentAuthorization, lockSubscription, pendingFirstCharge } from "./subscription-store.ts";

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
    sub.updatedAt = now;
    authorization.status = "EXPIRED";
    authorization.expiredAt = now;
    recordEvent(em, ctx.clock, { merchantId: sub.merchantId, type: "subscription.expired", data: subscriptionRecord(sub, authorization) });
    return true;
  });
}

export const EXPIRY_BATCH = 200;

/**
 * The sweep behind the delayed jobs: every pending authorization due on the
 * service clock (sandbox advances included), oldest first, in batches.
 * Each subscription is expired in its own transaction.
 */
export async function expireDueAuthorizations(ctx: UseCaseContext): Promise<number> {
  let expired = 0;
  const seen = new Set<string>();
  for (;;) {
    const due = await ctx.em.execute<{ subscription_id: string }[]>(
      `select subscription_id from subscription_authorizations
        where status = 'PENDING' and expires_at <= ? order by expires_at limit ?`,
      [ctx.clock.now(), EXPIRY_BATCH],
    );
    const fresh = due.map((r) => r.subscription_id).filter((id) => !seen.has(id));
    if (fresh.length === 0) break;
    for (const id of fresh) {
      seen.add(id);
      if (await expireAuthorization({ em: ctx.em.fork(), clock: ctx.clock }, id)) expired += 1;
    }
    if (due.length < EXPIRY_BATCH) break;
  }
  return expired;
}

import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../../platform/clock.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { recordEvent } from "../../events/record-event.ts";
import { SubscriptionChangeSession, type ChangeSessionRow } from "./change-session-entities.ts";
import { changeSessionMachine } from "./change-session-status-machine.ts";
import { changeSessionRecord } from "./change-session-record.ts";
import { expiredChangeSessionIds, lockChangeSession, pendingSessionCharge } from "./change-session-store.ts";
import { lockSubscription } from "../subscription-store.ts";
import { touch } from "../../platform/record-version.ts";

/** PENDING_APPROVAL → EXPIRED with its event, in the caller's transaction (rows locked by the caller). */
export function expireChangeSessionNow(em: EntityManager, clock: Clock, session: ChangeSessionRow): void {
  const now = clock.now();
  session.status = changeSessionMachine.next(session.status, "expire");
  session.expiredAt = now;
  touch(session, now);
  recordEvent(em, clock, { merchantId: session.merchantId, type: "subscription.change_session.expired", data: changeSessionRecord(session) });
}

/**
 * Expires a session whose approval link ran out. Safe to run any number of
 * times and concurrently (delayed job, sweep): under the locks it acts only
 * on a session still PENDING_APPROVAL and due on the service clock. An
 * immediate charge in flight wins: it is settled first (by the approval or
 * the sweep), then the session is reconsidered. True when this call expired it.
 */
export async function expireChangeSession(ctx: UseCaseContext, changeSessionId: string): Promise<boolean> {
  return ctx.em.transactional(async (em) => {
    const found = await em.findOne(SubscriptionChangeSession, { id: changeSessionId }, { refresh: true });
    if (!found || found.status !== "PENDING_APPROVAL") return false;
    await lockSubscription(em, found.subscriptionId);
    const session = await lockChangeSession(em, found.id);
    if (session.status !== "PENDING_APPROVAL" || session.expiresAt.getTime() > ctx.clock.now().getTime()) return false;
    if (await pendingSessionCharge(em, session.id)) return false;
    expireChangeSessionNow(em, ctx.clock, session);
    return true;
  });
}

const EXPIRY_BATCH = 200;

/** The sweep behind the delayed jobs: every session awaiting approval past its expiry on the service clock. */
export async function expireDueChangeSessions(ctx: UseCaseContext): Promise<number> {
  let expired = 0;
  const seen = new Set<string>();
  for (;;) {
    const due = await expiredChangeSessionIds(ctx.em, ctx.clock.now(), EXPIRY_BATCH);
    const fresh = due.filter((id) => !seen.has(id));
    if (fresh.length === 0) break;
    for (const id of fresh) {
      seen.add(id);
      if (await expireChangeSession({ em: ctx.em.fork(), clock: ctx.clock }, id)) expired += 1;
    }
    if (due.length < EXPIRY_BATCH) break;
  }
  return expired;
}

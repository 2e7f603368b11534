import type { EntityManager } from "@mikro-orm/postgresql";
import type { UseCaseContext } from "../platform/use-case.ts";
import { recordEvent } from "../events/record-event.ts";
import type { EventType } from "../events/contract.ts";
import type { AuthorizationRow, SubscriptionRow } from "./entities.ts";
import { nextStatus, type SubscriptionEvent, type SubscriptionStatus } from "./status-machine.ts";
import { subscriptionRecord } from "./subscription-record.ts";
import { currentAuthorization, lockSubscription } from "./subscription-store.ts";
import { touch } from "../platform/record-version.ts";

interface TransitionSpec {
  /** The merchant's subscription, or (customer actions) the wallet user's: exactly one of the two. */
  merchantId?: string;
  walletUserId?: string;
  id: string;
  event: SubscriptionEvent;
  eventType: EventType;
  /** Extra checks under the lock (may throw). */
  guard?: (em: EntityManager, sub: SubscriptionRow) => Promise<void>;
  /** Stamps the move's own fields (times, reasons) after the status changed. */
  apply: (sub: SubscriptionRow, from: SubscriptionStatus, now: Date, authorization: AuthorizationRow | null) => void;
  /** Changes to other rows that belong to the same move, in the same transaction (e.g. change sessions on cancel). */
  alsoInTransaction?: (em: EntityManager, sub: SubscriptionRow, now: Date) => Promise<void>;
}

/**
 * One status change of a merchant's (or a customer's) subscription: lock the row, ask the
 * status machine, stamp, record the event, commit. The lock serialises
 * concurrent requests, so each sees the status the previous one left.
 */
export async function transitionSubscription(
  ctx: UseCaseContext,
  spec: TransitionSpec,
): Promise<{ subscription: SubscriptionRow; authorization: AuthorizationRow | null }> {
  return ctx.em.transactional(async (em) => {
    const owner =
      spec.merchantId !== undefined ? { merchantId: spec.merchantId } : spec.walletUserId !== undefined ? { walletUserId: spec.walletUserId } : undefined;
    if (!owner) throw new Error("a subscription transition names its merchant or its wallet user");
    const sub = await lockSubscription(em, spec.id, owner);
    const from = sub.status;
    const to = nextStatus(from, spec.event, sub.pausedFromStatus);
    await spec.guard?.(em, sub);
    const authorization = await currentAuthorization(em, sub.id);
    const now = ctx.clock.now();
    sub.status = to;
    touch(sub, now);
    spec.apply(sub, from, now, authorization);
    await spec.alsoInTransaction?.(em, sub, now);
    recordEvent(em, ctx.clock, { merchantId: sub.merchantId, type: spec.eventType, data: subscriptionRecord(sub, authorization) });
    return { subscription: sub, authorization };
  });
}

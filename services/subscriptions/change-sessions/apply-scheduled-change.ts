import type { UseCaseContext } from "../../platform/use-case.ts";
import { DomainError } from "../../platform/errors.ts";
import { SubscriptionChangeSession } from "./change-session-entities.ts";
import { lockSubscription } from "../subscription-store.ts";
import { applyDuePlanChange } from "./apply-due-plan-change.ts";
import { duePlanChangeIds } from "./change-session-store.ts";

/**
 * The delayed job's use case: in its own transaction, with the subscription
 * locked (the same lock the renewal engine holds), apply the scheduled change
 * if it is due. Running it twice, early, or after the renewal engine already
 * applied it does nothing. Returns true when this call applied it.
 */
export async function applyScheduledChange(ctx: UseCaseContext, changeSessionId: string): Promise<boolean> {
  return ctx.em.transactional(async (em) => {
    const session = await em.findOne(SubscriptionChangeSession, { id: changeSessionId }, { refresh: true });
    if (!session || session.status !== "SCHEDULED") return false;
    const sub = await lockSubscription(em, session.subscriptionId).catch((err: unknown) => {
      if (err instanceof DomainError && err.kind === "not_found") return null;
      throw err;
    });
    if (!sub) return false;
    return applyDuePlanChange(em, ctx.clock, sub);
  });
}

const APPLY_BATCH = 200;

/**
 * The sweep behind the delayed jobs (Postgres is the source of truth): every
 * scheduled change whose billing date has come on the service clock (sandbox
 * advances included, lost Redis jobs included), each in its own transaction.
 */
export async function applyDuePlanChanges(ctx: UseCaseContext): Promise<number> {
  let applied = 0;
  const seen = new Set<string>();
  for (;;) {
    const due = await duePlanChangeIds(ctx.em, ctx.clock.now(), APPLY_BATCH);
    const fresh = due.filter((id) => !seen.has(id));
    if (fresh.length === 0) break;
    for (const id of fresh) {
      seen.add(id);
      if (await applyScheduledChange({ em: ctx.em.fork(), clock: ctx.clock }, id)) applied += 1;
    }
    if (due.length < APPLY_BATCH) break;
  }
  return applied;
}

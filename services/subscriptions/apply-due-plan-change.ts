import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../platform/clock.ts";
import type { SubscriptionRow } from "./entities.ts";

/**
 * Applies a SCHEDULED change session whose effective time has come, inside the
 * caller's transaction (the caller has already locked the subscription row).
 * Returns true if the subscription's plan was switched.
 *
 * Contract with the renewal engine: it calls this before computing a
 * renewal's amount so the renewal is charged at the new plan's amount.
 * (Body being implemented by the plan-changes work; this stub keeps callers compiling.)
 */
export async function applyDuePlanChange(_em: EntityManager, _clock: Clock, _subscription: SubscriptionRow): Promise<boolean> {
  return false;
}

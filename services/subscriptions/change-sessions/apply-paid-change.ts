import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../../platform/clock.ts";
import type { Logger } from "../../platform/logger.ts";
import type { ChargeRow, SubscriptionRow } from "../entities.ts";
import { lockChangeSession } from "./change-session-store.ts";
import { switchPlan } from "./switch-plan.ts";

/**
 * settleCharge's success step for an immediate plan-change charge, in its
 * transaction (subscription locked, charge just marked SUCCEEDED): the
 * session is approved and applied and the subscription switches plan, with
 * the charge's success. Decline, expiry and subscription cancel all wait for
 * a charge in flight, so the session is still awaiting approval here; if it
 * were not, the money's record is kept and the mismatch logged.
 */
export async function applyPaidChange(em: EntityManager, clock: Clock, sub: SubscriptionRow, charge: ChargeRow, logger: Logger): Promise<void> {
  const session = await lockChangeSession(em, charge.changeSessionId!);
  if (session.status !== "PENDING_APPROVAL") {
    logger.error({ chargeId: charge.id, changeSessionId: session.id, status: session.status }, "immediate charge succeeded on a change session no longer awaiting approval");
    return;
  }
  session.chargeId = charge.id;
  await switchPlan(em, clock, sub, session, "approve_immediate");
}

import type { EntityManager } from "@mikro-orm/postgresql";
import { SubscriptionCharge, type ChargeRow } from "../entities.ts";

/** A period charge of the subscription in flight (renewal, trial's first charge, retry), if any: at most one per period. */
export async function pendingRenewalCharge(em: EntityManager, subscriptionId: string): Promise<ChargeRow | null> {
  return em.findOne(SubscriptionCharge, { subscriptionId, status: "PENDING", changeSessionId: null }, { refresh: true });
}

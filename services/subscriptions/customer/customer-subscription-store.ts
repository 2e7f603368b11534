import type { EntityManager } from "@mikro-orm/postgresql";

/** Queries of the customer's own view of their subscriptions; each runs in the caller's transaction. */

/**
 * The ids of the newest `perSubscription` charges of each of these
 * subscriptions, in one statement (not one per subscription).
 */
export async function newestChargeIds(em: EntityManager, subscriptionIds: readonly string[], perSubscription: number): Promise<string[]> {
  const ranked = await em.execute<{ id: string }[]>(
    `select id from (
       select id, row_number() over (partition by subscription_id order by created_at desc, id desc) as n
         from subscription_charges where subscription_id = any(?::uuid[])) c
      where c.n <= ?`,
    [`{${subscriptionIds.join(",")}}`, perSubscription],
  );
  return ranked.map((r) => r.id);
}

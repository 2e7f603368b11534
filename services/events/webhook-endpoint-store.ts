import type { EntityManager } from "@mikro-orm/postgresql";
import { sqlStatus } from "../platform/status-machine.ts";
import { endpointMachine } from "./endpoint-status.ts";

/**
 * The SQL of the webhook_endpoints table. Each function runs on the caller's
 * entity manager, so in the caller's transaction.
 */

const ENABLED = sqlStatus(endpointMachine.statuses, "ENABLED");

/** The enabled endpoints of these merchants, with the event types each subscribes to (the relay fans events out to them). */
export function enabledEndpointsOf(
  em: EntityManager,
  merchantIds: readonly string[],
): Promise<{ id: string; merchant_id: string; enabled_events: string[] }[]> {
  return em.execute<{ id: string; merchant_id: string; enabled_events: string[] }[]>(
    `select id, merchant_id, enabled_events from webhook_endpoints where status = ${ENABLED} and merchant_id = any(string_to_array(?, ',')::uuid[])`,
    [merchantIds.join(",")],
  );
}

/** Gives the endpoint's lease back, if `holder` still holds it (end of a worker's turn). */
export async function releaseLease(em: EntityManager, endpointId: string, holder: string): Promise<void> {
  await em.execute("update webhook_endpoints set lease_holder = null, lease_expires_at = null where id = ? and lease_holder = ?", [endpointId, holder]);
}

/** The endpoint's status, its row locked until the transaction ends (undefined when the row is gone). */
export async function lockEndpointStatus(em: EntityManager, endpointId: string): Promise<"ENABLED" | "DISABLED" | "DELETED" | undefined> {
  const [endpoint] = await em.execute<{ status: "ENABLED" | "DISABLED" | "DELETED" }[]>("select status from webhook_endpoints where id = ? for update", [
    endpointId,
  ]);
  return endpoint?.status;
}

/** Disables the endpoint for `reason` and drops its lease (a worker sending to it stops at its next claim). */
export async function disableEndpoint(em: EntityManager, endpointId: string, change: { status: string; reason: string; now: Date }): Promise<void> {
  await em.execute(
    `update webhook_endpoints set status = ?, disabled_reason = ?, disabled_at = ?, updated_at = ?, lease_holder = null, lease_expires_at = null
          where id = ?`,
    [change.status, change.reason, change.now, change.now, endpointId],
  );
}

/**
 * Locks the merchant's row until the transaction ends: endpoint creations of
 * one merchant run one at a time, so the per-merchant limit holds. FOR NO KEY
 * UPDATE, which other creations wait for but the foreign-key checks of rows
 * inserted for the merchant (KEY SHARE: a settle's events, after it took its
 * receipt counter) never do. (The
 * merchants table is the merchants domain's; this lock is the endpoints' own
 * use of it, and a domain reaches another's tables only through its contract.)
 */
export async function lockMerchantForEndpoints(em: EntityManager, merchantId: string): Promise<void> {
  await em.execute("select id from merchants where id = ? for no key update", [merchantId]);
}

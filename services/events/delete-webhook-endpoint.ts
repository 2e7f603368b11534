import type { UseCaseContext } from "../platform/use-case.ts";
import { endpointMachine } from "./endpoint-status.ts";
import { findWebhookEndpoint } from "./get-webhook-endpoint.ts";
import { failPendingDeliveriesOfDeletedEndpoint } from "./webhook-delivery-store.ts";

/**
 * Soft delete: the row stays for the delivery history, the API answers 404
 * for it from now on, and its pending deliveries end as FAILED (nothing
 * will be sent to it again).
 */
export async function deleteWebhookEndpoint(ctx: UseCaseContext, merchantId: string, id: string): Promise<void> {
  await ctx.em.transactional(async (em) => {
    const endpoint = await findWebhookEndpoint(em, merchantId, id, { lock: true });
    const now = ctx.clock.now();
    endpoint.status = endpointMachine.next(endpoint.status, "delete");
    endpoint.updatedAt = now;
    await em.flush();
    await failPendingDeliveriesOfDeletedEndpoint(em, endpoint.id, now);
  });
}

import type { UseCaseContext } from "../platform/use-case.ts";
import type { Queues } from "../platform/queue/queues.ts";
import type { WebhookEndpointRow } from "./webhook-entities.ts";
import { endpointMachine } from "./endpoint-status.ts";
import { findWebhookEndpoint } from "./get-webhook-endpoint.ts";
import { enqueueEndpointDrain } from "./webhook-queue.ts";

/**
 * Re-enables an endpoint (after a 410 or a manual disable). Deliveries that
 * were pending when it was disabled resume at once; events that occurred while
 * it was disabled were not queued for it (redeliver them if needed).
 */
export async function enableWebhookEndpoint(ctx: UseCaseContext, queues: Queues, input: { merchantId: string; id: string }): Promise<WebhookEndpointRow> {
  const endpoint = await ctx.em.transactional(async (em) => {
    const endpoint = await findWebhookEndpoint(em, input.merchantId, input.id, { lock: true });
    if (endpoint.status !== "ENABLED") {
      endpoint.status = endpointMachine.next(endpoint.status, "enable");
      endpoint.disabledReason = null;
      endpoint.disabledAt = null;
      endpoint.updatedAt = ctx.clock.now();
    }
    return endpoint;
  });
  await enqueueEndpointDrain(queues, endpoint.id, `enable-${endpoint.updatedAt.getTime()}`);
  return endpoint;
}

/** Stops deliveries to an endpoint without deleting it; pending ones wait for enable. */
export async function disableWebhookEndpoint(ctx: UseCaseContext, input: { merchantId: string; id: string }): Promise<WebhookEndpointRow> {
  return ctx.em.transactional(async (em) => {
    const endpoint = await findWebhookEndpoint(em, input.merchantId, input.id, { lock: true });
    if (endpoint.status !== "DISABLED") {
      const now = ctx.clock.now();
      endpoint.status = endpointMachine.next(endpoint.status, "disable");
      endpoint.disabledReason = "disabled by the merchant";
      endpoint.disabledAt = now;
      endpoint.updatedAt = now;
    }
    return endpoint;
  });
}

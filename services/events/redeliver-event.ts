import { randomUUID } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import type { Queues } from "../platform/queue/queues.ts";
import { DomainError } from "../platform/errors.ts";
import { WebhookDelivery, WebhookEndpoint, type WebhookEndpointRow } from "./webhook-entities.ts";
import { getEvent } from "./get-event.ts";
import { findWebhookEndpoint } from "./get-webhook-endpoint.ts";
import { subscribesTo } from "./webhook-endpoint-input.ts";
import { deliveryMachine } from "./delivery-status.ts";
import { enqueueDelivery } from "./webhook-queue.ts";
import { withAttempts, type DeliveryWithAttempts } from "./list-webhook-deliveries.ts";
import { eventSeqAndPartitionKey } from "./event-store.ts";
import { redeliver } from "./webhook-delivery-store.ts";

/**
 * Sends an event again, now, with a fresh retry schedule: to one endpoint
 * (even one not subscribed to the type: the merchant asked), or to every
 * enabled endpoint that either received it before or subscribes to its type
 * today. Works from any delivery state (after FAILED, to recover; after
 * SUCCEEDED, when the receiver lost it). The body is the same bytes as before.
 */
export async function redeliverEvent(
  ctx: UseCaseContext,
  queues: Queues,
  input: { merchantId: string; eventId: string; endpointId?: string | undefined; eventsRetentionDays: number },
): Promise<DeliveryWithAttempts[]> {
  const event = await getEvent(ctx, input.merchantId, input.eventId, input.eventsRetentionDays);
  const deliveries = await ctx.em.transactional(async (em) => {
    let targets: WebhookEndpointRow[];
    if (input.endpointId !== undefined) {
      const endpoint = await findWebhookEndpoint(em, input.merchantId, input.endpointId, { lock: true });
      if (endpoint.status !== "ENABLED") {
        throw new DomainError("failed_precondition", "WEBHOOK_ENDPOINT_DISABLED", `webhook endpoint ${endpoint.id} is disabled: enable it first`);
      }
      targets = [endpoint];
    } else {
      const previous = await em.find(WebhookDelivery, { eventId: event.id }, { fields: ["endpointId"] });
      const delivered = new Set(previous.map((d) => d.endpointId));
      const enabled = await em.find(WebhookEndpoint, { merchantId: input.merchantId, status: "ENABLED" }, { orderBy: { createdAt: "asc" } });
      targets = enabled.filter((e) => delivered.has(e.id) || subscribesTo(e.enabledEvents, event.type));
    }
    const partition = (await eventSeqAndPartitionKey(em, event.id))!;
    const now = ctx.clock.now();
    const status = deliveryMachine.next("FAILED", "redeliver");
    const ids: string[] = [];
    for (const endpoint of targets) {
      ids.push(
        await redeliver(em, {
          id: randomUUID(),
          merchantId: input.merchantId,
          eventId: event.id,
          endpointId: endpoint.id,
          eventSeq: partition.seq,
          eventCreatedAt: partition.created_at,
          status,
          now,
        }),
      );
    }
    return ids.length ? em.find(WebhookDelivery, { id: { $in: ids } }, { orderBy: { createdAt: "asc", id: "asc" }, refresh: true }) : [];
  });
  for (const d of deliveries) {
    await enqueueDelivery(queues, { endpointId: d.endpointId, deliveryId: d.id, attemptNumber: d.attemptCount + 1 });
  }
  return withAttempts(ctx, deliveries);
}

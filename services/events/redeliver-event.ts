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
    // created_at as Postgres text: exact (a JS Date keeps milliseconds); it is the delivery's partition key.
    const [seqRow] = await em.execute<{ seq: string; created_at: string }[]>("select seq, created_at::text as created_at from events where id = ?", [event.id]);
    const now = ctx.clock.now();
    const status = deliveryMachine.next("FAILED", "redeliver");
    const ids: string[] = [];
    for (const endpoint of targets) {
      const [row] = await em.execute<{ id: string }[]>(
        `insert into webhook_deliveries (id, merchant_id, event_id, endpoint_id, event_seq, status, attempt_count, retry_index, next_attempt_at, created_at, updated_at, event_created_at)
         values (?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?)
         on conflict (event_id, endpoint_id, event_created_at) do update set status = excluded.status, retry_index = 0, next_attempt_at = excluded.next_attempt_at, updated_at = excluded.updated_at
         returning id`,
        [randomUUID(), input.merchantId, event.id, endpoint.id, seqRow!.seq, status, now, now, now, seqRow!.created_at],
      );
      ids.push(row!.id);
    }
    return ids.length ? em.find(WebhookDelivery, { id: { $in: ids } }, { orderBy: { createdAt: "asc", id: "asc" }, refresh: true }) : [];
  });
  for (const d of deliveries) {
    await enqueueDelivery(queues, { endpointId: d.endpointId, deliveryId: d.id, attemptNumber: d.attemptCount + 1 });
  }
  return withAttempts(ctx, deliveries);
}

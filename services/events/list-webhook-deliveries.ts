import type { FilterQuery } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../platform/pagination.ts";
import { Event } from "./entities.ts";
import { DELIVERY_STATUSES, WebhookDelivery, WebhookDeliveryAttempt, type WebhookDeliveryAttemptRow, type WebhookDeliveryRow } from "./webhook-entities.ts";
import { findWebhookEndpoint } from "./get-webhook-endpoint.ts";

export interface DeliveryWithAttempts {
  delivery: WebhookDeliveryRow;
  eventType: string;
  attempts: WebhookDeliveryAttemptRow[];
}

interface ListWebhookDeliveriesInput {
  merchantId: string;
  endpointId: string;
  limit?: number | undefined;
  cursor?: string | undefined;
  status?: string | undefined;
  eventId?: string | undefined;
}

/** An endpoint's deliveries, newest first, each with every attempt made (oldest first). */
export async function listWebhookDeliveries(ctx: UseCaseContext, input: ListWebhookDeliveriesInput): Promise<Page<DeliveryWithAttempts>> {
  const endpoint = await findWebhookEndpoint(ctx.em, input.merchantId, input.endpointId);
  if (input.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(input.status)) {
    throw invalid("INVALID_REQUEST", `status: must be one of ${DELIVERY_STATUSES.join(", ")}`);
  }
  if (input.eventId !== undefined && !isUuid(input.eventId)) throw invalid("INVALID_REQUEST", "eventId: must be a uuid");
  const limit = clampLimit(input.limit);
  const where = {
    endpointId: endpoint.id,
    ...(input.status !== undefined && { status: input.status }),
    ...(input.eventId !== undefined && { eventId: input.eventId }),
    ...afterCursor(input.cursor),
  } as FilterQuery<WebhookDeliveryRow>;
  const page = toPage(await ctx.em.find(WebhookDelivery, where, { orderBy: KEYSET_ORDER, limit: limit + 1 }), limit);
  return { ...page, items: await withAttempts(ctx, page.items) };
}

export async function withAttempts(ctx: UseCaseContext, deliveries: WebhookDeliveryRow[]): Promise<DeliveryWithAttempts[]> {
  if (deliveries.length === 0) return [];
  const ids = deliveries.map((d) => d.id);
  const attempts = await ctx.em.find(WebhookDeliveryAttempt, { deliveryId: { $in: ids } }, { orderBy: { attemptNumber: "asc" } });
  const events = await ctx.em.find(Event, { id: { $in: [...new Set(deliveries.map((d) => d.eventId))] } }, { fields: ["id", "type"] });
  const typeOf = new Map(events.map((e) => [e.id, e.type]));
  return deliveries.map((delivery) => ({
    delivery,
    eventType: typeOf.get(delivery.eventId) ?? "",
    attempts: attempts.filter((a) => a.deliveryId === delivery.id),
  }));
}

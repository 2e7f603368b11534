import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Event, WebhookDelivery, WebhookEndpoint } from "../../proto/gen/billing/events/v1/events_pb.ts";

const iso = (t: Timestamp | undefined) => (t ? timestampDate(t).toISOString() : null);

/** The REST event: the same object the webhook body carries (services/events/event-record.ts). */
export function eventBody(event: Event) {
  return {
    id: event.id,
    object: "event",
    type: event.type,
    createdAt: iso(event.createdAt),
    sequence: event.sequence === undefined ? null : Number(event.sequence),
    data: JSON.parse(event.dataJson || "{}") as Record<string, unknown>,
  };
}

export function webhookEndpointBody(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    object: "webhook_endpoint",
    url: endpoint.url,
    description: endpoint.description ?? null,
    enabledEvents: endpoint.enabledEvents,
    status: endpoint.status,
    disabledReason: endpoint.disabledReason ?? null,
    disabledAt: iso(endpoint.disabledAt),
    previousSecretExpiresAt: iso(endpoint.previousSecretExpiresAt),
    ordered: endpoint.ordered,
    maxInFlight: endpoint.maxInFlight,
    createdAt: iso(endpoint.createdAt),
    updatedAt: iso(endpoint.updatedAt),
  };
}

export function deliveryBody(delivery: WebhookDelivery) {
  return {
    id: delivery.id,
    object: "webhook_delivery",
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    endpointId: delivery.endpointId,
    status: delivery.status,
    attemptCount: delivery.attemptCount,
    nextAttemptAt: iso(delivery.nextAttemptAt),
    lastAttemptAt: iso(delivery.lastAttemptAt),
    lastStatusCode: delivery.lastStatusCode ?? null,
    lastError: delivery.lastError ?? null,
    createdAt: iso(delivery.createdAt),
    updatedAt: iso(delivery.updatedAt),
    attempts: delivery.attempts.map((a) => ({
      attemptNumber: a.attemptNumber,
      attemptedAt: iso(a.attemptedAt),
      outcome: a.outcome,
      statusCode: a.statusCode ?? null,
      error: a.error ?? null,
      durationMs: a.durationMs ?? null,
      responseExcerpt: a.responseExcerpt ?? null,
    })),
  };
}

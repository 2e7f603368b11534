import { iso, isoOrNull } from "../platform/timestamps.ts";
import type { WebhookDeliveryAttemptRow, WebhookEndpointRow } from "./webhook-entities.ts";
import type { DeliveryWithAttempts } from "./list-webhook-deliveries.ts";

/** The merchant-facing webhook endpoint (the REST body): never its secrets. */
export function webhookEndpointRecord(endpoint: WebhookEndpointRow) {
  return {
    id: endpoint.id,
    object: "webhook_endpoint",
    url: endpoint.url,
    description: endpoint.description ?? null,
    enabledEvents: endpoint.enabledEvents,
    status: endpoint.status,
    disabledReason: endpoint.disabledReason ?? null,
    disabledAt: isoOrNull(endpoint.disabledAt),
    previousSecretExpiresAt: isoOrNull(endpoint.previousSecretExpiresAt),
    ordered: endpoint.ordered,
    maxInFlight: endpoint.maxInFlight,
    createdAt: iso(endpoint.createdAt),
    updatedAt: iso(endpoint.updatedAt),
  };
}

function webhookAttemptRecord(a: WebhookDeliveryAttemptRow) {
  return {
    attemptNumber: a.attemptNumber,
    attemptedAt: iso(a.attemptedAt),
    outcome: a.outcome,
    statusCode: a.statusCode ?? null,
    error: a.error ?? null,
    durationMs: a.durationMs ?? null,
    responseExcerpt: a.responseExcerpt ?? null,
  };
}

/** A delivery of one event to one endpoint, with every attempt (oldest first): the REST body. */
export function webhookDeliveryRecord({ delivery, eventType, attempts }: DeliveryWithAttempts) {
  return {
    id: delivery.id,
    object: "webhook_delivery",
    eventId: delivery.eventId,
    eventType,
    endpointId: delivery.endpointId,
    status: delivery.status,
    attemptCount: delivery.attemptCount,
    nextAttemptAt: isoOrNull(delivery.nextAttemptAt),
    lastAttemptAt: isoOrNull(delivery.lastAttemptAt),
    lastStatusCode: delivery.lastStatusCode ?? null,
    lastError: delivery.lastError ?? null,
    createdAt: iso(delivery.createdAt),
    updatedAt: iso(delivery.updatedAt),
    attempts: attempts.map(webhookAttemptRecord),
  };
}

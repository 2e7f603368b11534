import type { ServiceImpl } from "@connectrpc/connect";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { EventsService } from "../../proto/gen/billing/events/v1/events_pb.ts";
import { contextFor, type ServiceDeps } from "../platform/service-deps.ts";
import type { EventRow } from "./entities.ts";
import type { WebhookEndpointRow } from "./webhook-entities.ts";
import type { DeliveryWithAttempts } from "./list-webhook-deliveries.ts";
import { listEvents } from "./list-events.ts";
import { getEvent } from "./get-event.ts";
import { redeliverEvent } from "./redeliver-event.ts";
import { createWebhookEndpoint } from "./create-webhook-endpoint.ts";
import { listWebhookEndpoints } from "./list-webhook-endpoints.ts";
import { getWebhookEndpoint } from "./get-webhook-endpoint.ts";
import { deleteWebhookEndpoint } from "./delete-webhook-endpoint.ts";
import { rotateWebhookSecret } from "./rotate-webhook-secret.ts";
import { disableWebhookEndpoint, enableWebhookEndpoint } from "./set-webhook-endpoint-status.ts";
import { listWebhookDeliveries } from "./list-webhook-deliveries.ts";

const ts = (d: Date | null | undefined) => (d ? timestampFromDate(d) : undefined);

export function eventMessage(event: EventRow) {
  return {
    id: event.id,
    merchantId: event.merchantId,
    type: event.type,
    createdAt: timestampFromDate(event.createdAt),
    dataJson: JSON.stringify(event.data),
    sequence: event.publishedSeq == null ? undefined : BigInt(event.publishedSeq),
  };
}

export function endpointMessage(endpoint: WebhookEndpointRow) {
  return {
    id: endpoint.id,
    merchantId: endpoint.merchantId,
    url: endpoint.url,
    description: endpoint.description ?? undefined,
    enabledEvents: endpoint.enabledEvents,
    status: endpoint.status,
    disabledReason: endpoint.disabledReason ?? undefined,
    disabledAt: ts(endpoint.disabledAt),
    previousSecretExpiresAt: ts(endpoint.previousSecretExpiresAt),
    createdAt: timestampFromDate(endpoint.createdAt),
    updatedAt: timestampFromDate(endpoint.updatedAt),
    ordered: endpoint.ordered,
    maxInFlight: endpoint.maxInFlight,
  };
}

export function deliveryMessage({ delivery, eventType, attempts }: DeliveryWithAttempts) {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    eventType,
    endpointId: delivery.endpointId,
    status: delivery.status,
    attemptCount: delivery.attemptCount,
    nextAttemptAt: ts(delivery.nextAttemptAt),
    lastAttemptAt: ts(delivery.lastAttemptAt),
    lastStatusCode: delivery.lastStatusCode ?? undefined,
    lastError: delivery.lastError ?? undefined,
    createdAt: timestampFromDate(delivery.createdAt),
    updatedAt: timestampFromDate(delivery.updatedAt),
    attempts: attempts.map((a) => ({
      attemptNumber: a.attemptNumber,
      attemptedAt: timestampFromDate(a.attemptedAt),
      outcome: a.outcome,
      statusCode: a.statusCode ?? undefined,
      error: a.error ?? undefined,
      durationMs: a.durationMs ?? undefined,
      responseExcerpt: a.responseExcerpt ?? undefined,
    })),
  };
}

export function eventsService(deps: ServiceDeps): ServiceImpl<typeof EventsService> {
  const key = deps.config.secretsKey;
  return {
    async listEvents(req) {
      const page = await listEvents(contextFor(deps), {
        merchantId: req.merchantId,
        limit: req.limit,
        cursor: req.cursor,
        type: req.type,
        createdAfter: req.createdAfter ? timestampDate(req.createdAfter) : undefined,
        sequenceAfter: req.sequenceAfter,
      });
      return { events: page.items.map(eventMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async getEvent(req) {
      return { event: eventMessage(await getEvent(contextFor(deps), req.merchantId, req.id)) };
    },
    async redeliverEvent(req) {
      const deliveries = await redeliverEvent(contextFor(deps), deps.queues, {
        merchantId: req.merchantId,
        eventId: req.eventId,
        endpointId: req.endpointId,
      });
      return { deliveries: deliveries.map(deliveryMessage) };
    },
    async createWebhookEndpoint(req) {
      const res = await createWebhookEndpoint(contextFor(deps), key, {
        merchantId: req.merchantId,
        url: req.url,
        enabledEvents: req.enabledEvents,
        description: req.description,
        ordered: req.ordered,
        maxInFlight: req.maxInFlight,
      });
      return { endpoint: endpointMessage(res.endpoint), secret: res.secret };
    },
    async listWebhookEndpoints(req) {
      const page = await listWebhookEndpoints(contextFor(deps), { merchantId: req.merchantId, limit: req.limit, cursor: req.cursor });
      return { endpoints: page.items.map(endpointMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async getWebhookEndpoint(req) {
      return { endpoint: endpointMessage(await getWebhookEndpoint(contextFor(deps), req.merchantId, req.id)) };
    },
    async deleteWebhookEndpoint(req) {
      await deleteWebhookEndpoint(contextFor(deps), req.merchantId, req.id);
      return {};
    },
    async rotateWebhookSecret(req) {
      const res = await rotateWebhookSecret(contextFor(deps), key, { merchantId: req.merchantId, id: req.id });
      return { endpoint: endpointMessage(res.endpoint), secret: res.secret };
    },
    async enableWebhookEndpoint(req) {
      return { endpoint: endpointMessage(await enableWebhookEndpoint(contextFor(deps), deps.queues, { merchantId: req.merchantId, id: req.id })) };
    },
    async disableWebhookEndpoint(req) {
      return { endpoint: endpointMessage(await disableWebhookEndpoint(contextFor(deps), { merchantId: req.merchantId, id: req.id })) };
    },
    async listWebhookDeliveries(req) {
      const page = await listWebhookDeliveries(contextFor(deps), {
        merchantId: req.merchantId,
        endpointId: req.endpointId,
        limit: req.limit,
        cursor: req.cursor,
        status: req.status,
        eventId: req.eventId,
      });
      return { deliveries: page.items.map(deliveryMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
  };
}

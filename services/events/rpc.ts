import type { ServiceImpl } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { EventsService } from "../../proto/gen/billing/events/v1/events_pb.ts";
import type { ServiceDeps } from "../platform/service-deps.ts";
import { useCaseContext } from "../platform/rpc/use-case-context.ts";
import { toOptionalTimestamp, toTimestamp } from "../platform/timestamps.ts";
import { withRecordJson } from "../platform/rpc/record-json.ts";
import type { EventRow } from "./entities.ts";
import type { WebhookEndpointRow } from "./webhook-entities.ts";
import type { DeliveryWithAttempts } from "./list-webhook-deliveries.ts";
import { eventRecord } from "./event-record.ts";
import { webhookDeliveryRecord, webhookEndpointRecord } from "./webhook-records.ts";
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

/** The typed messages are the records (event-record.ts, webhook-records.ts) field by field, and carry them whole for the gateway. */
function eventMessage(event: EventRow) {
  const r = eventRecord(event);
  return withRecordJson(
    {
      id: r.id,
      merchantId: event.merchantId,
      type: r.type,
      createdAt: toTimestamp(r.createdAt),
      dataJson: JSON.stringify(r.data),
      // From the row: int64 stays exact on the wire (the record's number is what REST has always shown).
      sequence: event.publishedSeq == null ? undefined : BigInt(event.publishedSeq),
    },
    r,
  );
}

function endpointMessage(endpoint: WebhookEndpointRow) {
  const r = webhookEndpointRecord(endpoint);
  return withRecordJson(
    {
      id: r.id,
      merchantId: endpoint.merchantId,
      url: r.url,
      description: r.description ?? undefined,
      enabledEvents: r.enabledEvents,
      status: r.status,
      disabledReason: r.disabledReason ?? undefined,
      disabledAt: toOptionalTimestamp(r.disabledAt),
      previousSecretExpiresAt: toOptionalTimestamp(r.previousSecretExpiresAt),
      createdAt: toTimestamp(r.createdAt),
      updatedAt: toTimestamp(r.updatedAt),
      ordered: r.ordered,
      maxInFlight: r.maxInFlight,
    },
    r,
  );
}

function deliveryMessage(found: DeliveryWithAttempts) {
  const r = webhookDeliveryRecord(found);
  return withRecordJson(
    {
      id: r.id,
      eventId: r.eventId,
      eventType: r.eventType,
      endpointId: r.endpointId,
      status: r.status,
      attemptCount: r.attemptCount,
      nextAttemptAt: toOptionalTimestamp(r.nextAttemptAt),
      lastAttemptAt: toOptionalTimestamp(r.lastAttemptAt),
      lastStatusCode: r.lastStatusCode ?? undefined,
      lastError: r.lastError ?? undefined,
      createdAt: toTimestamp(r.createdAt),
      updatedAt: toTimestamp(r.updatedAt),
      attempts: r.attempts.map((a) => ({
        attemptNumber: a.attemptNumber,
        attemptedAt: toTimestamp(a.attemptedAt),
        outcome: a.outcome,
        statusCode: a.statusCode ?? undefined,
        error: a.error ?? undefined,
        durationMs: a.durationMs ?? undefined,
        responseExcerpt: a.responseExcerpt ?? undefined,
      })),
    },
    r,
  );
}

export function eventsService(deps: ServiceDeps): ServiceImpl<typeof EventsService> {
  const key = deps.config.secretsKey;
  return {
    async listEvents(req, call) {
      const page = await listEvents(useCaseContext(call), {
        merchantId: req.merchantId,
        limit: req.limit,
        cursor: req.cursor,
        type: req.type,
        createdAfter: req.createdAfter ? timestampDate(req.createdAfter) : undefined,
        sequenceAfter: req.sequenceAfter,
        objectId: req.objectId,
      });
      return { events: page.items.map(eventMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async getEvent(req, call) {
      return { event: eventMessage(await getEvent(useCaseContext(call), req.merchantId, req.id, deps.config.retention.eventsDays)) };
    },
    async redeliverEvent(req, call) {
      const deliveries = await redeliverEvent(useCaseContext(call), deps.queues, {
        merchantId: req.merchantId,
        eventId: req.eventId,
        endpointId: req.endpointId,
        eventsRetentionDays: deps.config.retention.eventsDays,
      });
      return { deliveries: deliveries.map(deliveryMessage) };
    },
    async createWebhookEndpoint(req, call) {
      const res = await createWebhookEndpoint(useCaseContext(call), key, {
        merchantId: req.merchantId,
        url: req.url,
        enabledEvents: req.enabledEvents,
        description: req.description,
        ordered: req.ordered,
        maxInFlight: req.maxInFlight,
      });
      return { endpoint: endpointMessage(res.endpoint), secret: res.secret };
    },
    async listWebhookEndpoints(req, call) {
      const page = await listWebhookEndpoints(useCaseContext(call), { merchantId: req.merchantId, limit: req.limit, cursor: req.cursor });
      return { endpoints: page.items.map(endpointMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async getWebhookEndpoint(req, call) {
      return { endpoint: endpointMessage(await getWebhookEndpoint(useCaseContext(call), req.merchantId, req.id)) };
    },
    async deleteWebhookEndpoint(req, call) {
      await deleteWebhookEndpoint(useCaseContext(call), req.merchantId, req.id);
      return {};
    },
    async rotateWebhookSecret(req, call) {
      const res = await rotateWebhookSecret(useCaseContext(call), key, { merchantId: req.merchantId, id: req.id });
      return { endpoint: endpointMessage(res.endpoint), secret: res.secret };
    },
    async enableWebhookEndpoint(req, call) {
      return { endpoint: endpointMessage(await enableWebhookEndpoint(useCaseContext(call), deps.queues, { merchantId: req.merchantId, id: req.id })) };
    },
    async disableWebhookEndpoint(req, call) {
      return { endpoint: endpointMessage(await disableWebhookEndpoint(useCaseContext(call), { merchantId: req.merchantId, id: req.id })) };
    },
    async listWebhookDeliveries(req, call) {
      const page = await listWebhookDeliveries(useCaseContext(call), {
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

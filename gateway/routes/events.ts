import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { defineRoutes } from "../route.ts";
import { pageSchema, toPageBody } from "../schemas/common.ts";
import { eventSchema, listEventsQuery, redeliverEventBody, redeliveredSchema } from "../schemas/events.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";
import { parseDateTime } from "../validation/date-time.ts";

export const eventRoutes = defineRoutes([
  {
    method: "get",
    path: "/api/v1/events",
    operationId: "listEvents",
    summary: "List events, newest first",
    description:
      "Every state change the merchant cares about, recorded in the same transaction as the change. " +
      "To reconcile by polling, follow the feed: `sequenceAfter` = the last `sequence` you processed (oldest first, never skips an event).",
    tag: "Events",
    auth: "apiKey",
    query: listEventsQuery,
    responses: { 200: { description: "A page of events", schema: pageSchema(eventSchema) } },
    async handler({ query, merchantId }, { clients }) {
      const res = await clients.events.listEvents({
        merchantId,
        limit: query.limit,
        cursor: query.cursor,
        type: query.type,
        createdAfter: query.createdAfter ? timestampFromDate(parseDateTime("createdAfter", query.createdAfter)) : undefined,
        sequenceAfter: query.sequenceAfter === undefined ? undefined : BigInt(query.sequenceAfter),
      });
      return { status: 200, body: toPageBody(res, res.events.map(recordOf)) };
    },
  },
  {
    method: "get",
    path: "/api/v1/events/:id",
    operationId: "getEvent",
    summary: "Get an event",
    tag: "Events",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The event", schema: eventSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { event } = await clients.events.getEvent({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(event) };
    },
  },
  {
    method: "post",
    path: "/api/v1/events/:id/redeliver",
    operationId: "redeliverEvent",
    summary: "Send an event again to one endpoint or to all",
    description:
      "Queues the event now, with a fresh retry schedule, whatever the state of its earlier deliveries (same body, same `webhook-id`). " +
      "The body is optional; `endpointId` limits it to one endpoint (which must be enabled).",
    tag: "Events",
    auth: "apiKey",
    body: redeliverEventBody,
    errors: [404, 409],
    responses: { 202: { description: "The deliveries now pending", schema: redeliveredSchema } },
    async handler({ params, body, merchantId }, { clients }) {
      const res = await clients.events.redeliverEvent({ merchantId, eventId: params.id!, endpointId: body.endpointId });
      return { status: 202, body: { eventId: params.id!, deliveries: res.deliveries.map(recordOf) } };
    },
  },
]);

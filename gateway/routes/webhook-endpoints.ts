import { defineRoutes } from "../route.ts";
import { pageSchema, paginationQueryProperties, toPageBody } from "../schemas/common.ts";
import { createWebhookEndpointBody, deliverySchema, listDeliveriesQuery, webhookEndpointSchema, webhookEndpointWithSecretSchema } from "../schemas/events.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";

const TAG = "Webhook endpoints";
const listQuery = { type: "object", additionalProperties: false, properties: { ...paginationQueryProperties } } as const;

export const webhookEndpointRoutes = defineRoutes([
  {
    method: "post",
    path: "/api/v1/webhook-endpoints",
    operationId: "createWebhookEndpoint",
    summary: "Register a URL that receives signed events",
    description: "The answer carries the signing `secret` (whsec_…): it is shown only here and by rotate-secret.",
    tag: TAG,
    auth: "apiKey",
    body: createWebhookEndpointBody,
    errors: [409],
    responses: { 201: { description: "The endpoint and its secret", schema: webhookEndpointWithSecretSchema } },
    async handler({ body, merchantId }, { clients }) {
      const res = await clients.events.createWebhookEndpoint({
        merchantId,
        url: body.url,
        enabledEvents: body.enabledEvents,
        description: body.description,
        ordered: body.ordered,
        maxInFlight: body.maxInFlight,
      });
      return { status: 201, body: { ...recordOf(res.endpoint), secret: res.secret } };
    },
  },
  {
    method: "get",
    path: "/api/v1/webhook-endpoints",
    operationId: "listWebhookEndpoints",
    summary: "List webhook endpoints, newest first",
    tag: TAG,
    auth: "apiKey",
    query: listQuery,
    responses: { 200: { description: "A page of endpoints (without secrets)", schema: pageSchema(webhookEndpointSchema) } },
    async handler({ query, merchantId }, { clients }) {
      const res = await clients.events.listWebhookEndpoints({ merchantId, limit: query.limit, cursor: query.cursor });
      return { status: 200, body: toPageBody(res, res.endpoints.map(recordOf)) };
    },
  },
  {
    method: "get",
    path: "/api/v1/webhook-endpoints/:id",
    operationId: "getWebhookEndpoint",
    summary: "Get a webhook endpoint",
    tag: TAG,
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The endpoint (without its secret)", schema: webhookEndpointSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { endpoint } = await clients.events.getWebhookEndpoint({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(endpoint) };
    },
  },
  {
    method: "delete",
    path: "/api/v1/webhook-endpoints/:id",
    operationId: "deleteWebhookEndpoint",
    summary: "Delete a webhook endpoint",
    description: "Nothing is sent to it any more; its pending deliveries end as FAILED.",
    tag: TAG,
    auth: "apiKey",
    errors: [404],
    responses: { 204: { description: "Deleted" } },
    async handler({ params, merchantId }, { clients }) {
      await clients.events.deleteWebhookEndpoint({ merchantId, id: params.id! });
      return { status: 204 };
    },
  },
  {
    method: "post",
    path: "/api/v1/webhook-endpoints/:id/rotate-secret",
    operationId: "rotateWebhookSecret",
    summary: "Replace the signing secret",
    description: "The previous secret keeps signing alongside the new one for 24 hours (two `v1,` signatures in `webhook-signature`).",
    tag: TAG,
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The endpoint and its new secret", schema: webhookEndpointWithSecretSchema } },
    async handler({ params, merchantId }, { clients }) {
      const res = await clients.events.rotateWebhookSecret({ merchantId, id: params.id! });
      return { status: 200, body: { ...recordOf(res.endpoint), secret: res.secret } };
    },
  },
  {
    method: "post",
    path: "/api/v1/webhook-endpoints/:id/enable",
    operationId: "enableWebhookEndpoint",
    summary: "Re-enable an endpoint (after a 410 Gone or a manual disable)",
    description: "Deliveries that were pending when it was disabled resume at once.",
    tag: TAG,
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The endpoint", schema: webhookEndpointSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { endpoint } = await clients.events.enableWebhookEndpoint({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(endpoint) };
    },
  },
  {
    method: "post",
    path: "/api/v1/webhook-endpoints/:id/disable",
    operationId: "disableWebhookEndpoint",
    summary: "Pause deliveries to an endpoint",
    tag: TAG,
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The endpoint", schema: webhookEndpointSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { endpoint } = await clients.events.disableWebhookEndpoint({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(endpoint) };
    },
  },
  {
    method: "get",
    path: "/api/v1/webhook-endpoints/:id/deliveries",
    operationId: "listWebhookDeliveries",
    summary: "Deliveries to an endpoint, newest first, each with every attempt",
    tag: TAG,
    auth: "apiKey",
    query: listDeliveriesQuery,
    errors: [404],
    responses: { 200: { description: "A page of deliveries", schema: pageSchema(deliverySchema) } },
    async handler({ params, query, merchantId }, { clients }) {
      const res = await clients.events.listWebhookDeliveries({
        merchantId,
        endpointId: params.id!,
        limit: query.limit,
        cursor: query.cursor,
        status: query.status,
        eventId: query.eventId,
      });
      return { status: 200, body: toPageBody(res, res.deliveries.map(recordOf)) };
    },
  },
]);

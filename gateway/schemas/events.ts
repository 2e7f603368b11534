import {
  DELIVERY_STATUSES,
  EVENT_TYPES,
  VISIBLE_ENDPOINT_STATUSES,
  WEBHOOK_MAX_IN_FLIGHT_DEFAULT,
  WEBHOOK_MAX_IN_FLIGHT_LIMIT,
} from "../../services/events/contract.ts";
import { dateTimeSchema, nullable, paginationQueryProperties, uuidSchema } from "./common.ts";

const eventTypeSchema = { type: "string", enum: [...EVENT_TYPES] } as const;

export const listEventsQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    type: { ...eventTypeSchema, description: "Only events of this type." },
    createdAfter: { ...dateTimeSchema, description: "Only events created strictly after this instant (RFC 3339)." },
    sequenceAfter: {
      type: "integer",
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description:
        "Feed mode: events whose `sequence` is above this, oldest first (commit order). Poll with the last `sequence` you processed; never skips an event. Not combinable with `cursor` or `createdAfter`.",
    },
  },
} as const;

export const eventSchema = {
  type: "object",
  required: ["id", "object", "type", "createdAt", "data"],
  description: "An event; the webhook body is exactly this object, serialized.",
  properties: {
    id: { ...uuidSchema, description: "Stable: the same in every delivery attempt (the `webhook-id` header)." },
    object: { const: "event" },
    type: eventTypeSchema,
    createdAt: { ...dateTimeSchema, description: "When the change happened (service clock)." },
    sequence: {
      type: ["integer", "null"],
      description: "Position in the merchant's event feed, in commit order; null for the fraction of a second before the relay publishes the event.",
    },
    data: { type: "object", description: "The object as it was right after the change (e.g. the whole subscription)." },
  },
} as const;

export const redeliverEventBody = {
  type: "object",
  additionalProperties: false,
  properties: {
    endpointId: { ...uuidSchema, description: "Only this endpoint; by default every enabled endpoint that received the event or subscribes to its type." },
  },
} as const;

const attemptSchema = {
  type: "object",
  required: ["attemptNumber", "attemptedAt", "outcome", "statusCode", "error", "durationMs"],
  properties: {
    attemptNumber: { type: "integer", minimum: 1 },
    attemptedAt: dateTimeSchema,
    outcome: { type: "string", enum: ["IN_PROGRESS", "SUCCEEDED", "FAILED", "INTERRUPTED"] },
    statusCode: nullable({ type: "integer" }),
    error: nullable({ type: "string" }),
    durationMs: nullable({ type: "integer" }),
    responseExcerpt: nullable({ type: "string", description: "The first 1000 bytes of the answer." }),
  },
} as const;

export const deliverySchema = {
  type: "object",
  required: ["id", "object", "eventId", "eventType", "endpointId", "status", "attemptCount", "nextAttemptAt", "createdAt", "attempts"],
  properties: {
    id: uuidSchema,
    object: { const: "webhook_delivery" },
    eventId: uuidSchema,
    eventType: eventTypeSchema,
    endpointId: uuidSchema,
    status: { type: "string", enum: [...DELIVERY_STATUSES] },
    attemptCount: { type: "integer", minimum: 0 },
    nextAttemptAt: { ...nullable(dateTimeSchema), description: "When the next attempt is due (PENDING only)." },
    lastAttemptAt: nullable(dateTimeSchema),
    lastStatusCode: nullable({ type: "integer" }),
    lastError: nullable({ type: "string" }),
    createdAt: dateTimeSchema,
    updatedAt: dateTimeSchema,
    attempts: { type: "array", items: attemptSchema, description: "Every attempt, oldest first." },
  },
} as const;

export const redeliveredSchema = {
  type: "object",
  required: ["eventId", "deliveries"],
  properties: { eventId: uuidSchema, deliveries: { type: "array", items: deliverySchema } },
} as const;

export const listDeliveriesQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    status: { type: "string", enum: [...DELIVERY_STATUSES] },
    eventId: uuidSchema,
  },
} as const;

export const createWebhookEndpointBody = {
  type: "object",
  additionalProperties: false,
  required: ["url"],
  properties: {
    url: {
      type: "string",
      format: "uri",
      pattern: "^[Hh][Tt][Tt][Pp][Ss]?://",
      maxLength: 2048,
      description: "Absolute http(s) URL that receives POSTed events.",
    },
    enabledEvents: {
      type: "array",
      items: { type: "string", enum: ["*", ...EVENT_TYPES] },
      minItems: 1,
      maxItems: EVENT_TYPES.length,
      uniqueItems: true,
      default: ["*"],
      description: 'Event types to receive, or ["*"] (the default) for all.',
    },
    description: { type: "string", maxLength: 500 },
    ordered: {
      type: "boolean",
      default: false,
      description:
        "true: one request at a time, in event order (a failing event is retried later and does not hold the next ones back). false: up to `maxInFlight` at once, in no guaranteed order.",
    },
    maxInFlight: {
      type: "integer",
      minimum: 1,
      maximum: WEBHOOK_MAX_IN_FLIGHT_LIMIT,
      default: WEBHOOK_MAX_IN_FLIGHT_DEFAULT,
      description: `Requests in flight at once to this endpoint when not ordered (default ${WEBHOOK_MAX_IN_FLIGHT_DEFAULT}).`,
    },
  },
} as const;

export const webhookEndpointSchema = {
  type: "object",
  required: ["id", "object", "url", "description", "enabledEvents", "status", "disabledReason", "ordered", "maxInFlight", "createdAt", "updatedAt"],
  properties: {
    id: uuidSchema,
    object: { const: "webhook_endpoint" },
    url: { type: "string" },
    description: nullable({ type: "string" }),
    enabledEvents: { type: "array", items: { type: "string" } },
    status: { type: "string", enum: [...VISIBLE_ENDPOINT_STATUSES] },
    disabledReason: { ...nullable({ type: "string" }), description: "Why it was disabled (e.g. it answered 410 Gone)." },
    disabledAt: nullable(dateTimeSchema),
    previousSecretExpiresAt: { ...nullable(dateTimeSchema), description: "Until then the secret replaced by the last rotation also signs." },
    ordered: { type: "boolean", description: "One request at a time, in event order." },
    maxInFlight: { type: "integer", description: "Requests in flight at once when not ordered." },
    createdAt: dateTimeSchema,
    updatedAt: dateTimeSchema,
  },
} as const;

export const webhookEndpointWithSecretSchema = {
  ...webhookEndpointSchema,
  required: [...webhookEndpointSchema.required, "secret"],
  properties: {
    ...webhookEndpointSchema.properties,
    secret: { type: "string", pattern: "^whsec_", description: "The signing secret (Standard Webhooks format). Shown only here: store it." },
  },
} as const;

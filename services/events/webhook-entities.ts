import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

import type { DeliveryStatus, EndpointStatus } from "./contract.ts";

export { DELIVERY_STATUSES } from "./contract.ts";

const ATTEMPT_OUTCOMES = ["IN_PROGRESS", "SUCCEEDED", "FAILED", "INTERRUPTED"] as const;
type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/**
 * A merchant's receiver. Secrets are AES-256-GCM ciphertexts bound to the
 * endpoint id (platform/sealed-secret.ts); the lease columns are written only by the delivery
 * claim (raw SQL under a row lock), never through this entity.
 */
export const WebhookEndpoint = defineEntity({
  name: "WebhookEndpoint",
  tableName: "webhook_endpoints",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    url: p.string().length(2048),
    description: p.string().length(500).nullable(),
    enabledEvents: p.json<string[]>(),
    status: p.string().length(16).$type<EndpointStatus>(),
    disabledReason: p.string().length(500).nullable(),
    disabledAt: p.datetime().nullable(),
    secretCiphertext: p.text(),
    previousSecretCiphertext: p.text().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    /** Requests in flight at once (migration 0018); ignored when ordered. */
    maxInFlight: p.integer(),
    /** One request at a time, in event order. */
    ordered: p.boolean(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** One per (event, endpoint): the durable state of getting that event to that endpoint. */
export const WebhookDelivery = defineEntity({
  name: "WebhookDelivery",
  tableName: "webhook_deliveries",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    eventId: p.uuid(),
    endpointId: p.uuid(),
    eventSeq: p.bigint("number"),
    status: p.string().length(16).$type<DeliveryStatus>(),
    attemptCount: p.integer(),
    retryIndex: p.integer(),
    nextAttemptAt: p.datetime().nullable(),
    lastAttemptAt: p.datetime().nullable(),
    lastStatusCode: p.integer().nullable(),
    lastError: p.string().length(1000).nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** Its event's createdAt: the month it is partitioned (and dropped) by, with its event (migration 0032). */
    eventCreatedAt: p.datetime(),
  },
});

/** One per HTTP attempt, kept for the merchant to inspect. */
export const WebhookDeliveryAttempt = defineEntity({
  name: "WebhookDeliveryAttempt",
  tableName: "webhook_delivery_attempts",
  properties: {
    id: p.uuid().primary(),
    deliveryId: p.uuid(),
    endpointId: p.uuid(),
    eventId: p.uuid(),
    attemptNumber: p.integer(),
    attemptedAt: p.datetime(),
    outcome: p.string().length(16).$type<AttemptOutcome>(),
    statusCode: p.integer().nullable(),
    error: p.string().length(1000).nullable(),
    durationMs: p.integer().nullable(),
    responseExcerpt: p.string().length(1000).nullable(),
    /** Its event's createdAt: the partition key, as for deliveries (migration 0032). */
    eventCreatedAt: p.datetime(),
  },
});

export type WebhookEndpointRow = InferEntity<typeof WebhookEndpoint>;
export type WebhookDeliveryRow = InferEntity<typeof WebhookDelivery>;
export type WebhookDeliveryAttemptRow = InferEntity<typeof WebhookDeliveryAttempt>;

export const webhookEntities = [WebhookEndpoint, WebhookDelivery, WebhookDeliveryAttempt];

import {
  CHANGE_CANCELLATION_REASONS,
  CHANGE_SESSION_STATUSES,
  EFFECTIVE_MODES,
  REASON_MAX_LENGTH,
  URL_MAX_LENGTH,
} from "../../services/subscriptions/contract.ts";
import { PRORATIONS } from "../../services/subscriptions/pricing/contract.ts";
import {
  amountOutSchema,
  amountSchema,
  dateTimeSchema,
  metadataSchema,
  nullable,
  paginationQueryProperties,
  recordVersionSchema,
  uuidSchema,
} from "./common.ts";

const redirectUrlSchema = { type: "string", format: "uri", pattern: "^https?://", maxLength: URL_MAX_LENGTH } as const;

export const createChangeSessionBody = {
  type: "object",
  additionalProperties: false,
  required: ["requestedPlanId", "successUrl", "cancelUrl"],
  description:
    "An `immediateChargeAmount` above zero needs `effectiveMode` IMMEDIATE (400 otherwise) and may not exceed the requested plan's `maximumChargeAmount` (400).",
  properties: {
    requestedPlanId: { ...uuidSchema, description: "One of your plans, not the subscription's current one (404 PLAN_NOT_FOUND / 409 SAME_PLAN)." },
    effectiveMode: {
      type: "string",
      enum: [...EFFECTIVE_MODES],
      default: "NEXT_BILLING",
      description: "IMMEDIATE: switches on approval. NEXT_BILLING: switches at the next billing date, before that renewal is charged.",
    },
    immediateChargeAmount: {
      ...amountSchema,
      description:
        "Charged from the subscription's funding asset on approval (IMMEDIATE only), in the requested plan's currency; absent: \"0\". Must be absent with `proration` PRORATE and IMMEDIATE (400): it is computed when the change applies.",
    },
    proration: {
      type: "string",
      enum: [...PRORATIONS],
      default: "NONE",
      description:
        "NONE: `immediateChargeAmount` as sent. PRORATE: when an IMMEDIATE change applies, new amount × unused fraction of the current period − old amount × unused fraction (by seconds, rounded to 18 decimals in the customer's favour); positive is charged at once, negative becomes the subscription's `creditBalance`. Both plans must share a currency (409 PRORATION_CURRENCY_MISMATCH).",
    },
    successUrl: {
      ...redirectUrlSchema,
      description: "Where the customer returns after approving, with `subscriptionId`, `changeSessionId` and `status` query parameters.",
    },
    cancelUrl: { ...redirectUrlSchema, description: "Where the customer returns after declining." },
    reason: { type: "string", maxLength: REASON_MAX_LENGTH, description: "Shown to the customer on the approval page." },
    metadata: metadataSchema,
  },
} as const;

export const listChangeSessionsQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    status: { type: "string", enum: [...CHANGE_SESSION_STATUSES] },
  },
} as const;

const changeSessionProperties = {
  id: uuidSchema,
  object: { const: "subscription_change_session" },
  subscriptionId: uuidSchema,
  status: { type: "string", enum: [...CHANGE_SESSION_STATUSES] },
  currentPlanId: { ...uuidSchema, description: "The subscription's plan when the session was created." },
  requestedPlanId: uuidSchema,
  effectiveMode: { type: "string", enum: [...EFFECTIVE_MODES] },
  immediateChargeAmount: amountOutSchema,
  proration: { type: "string", enum: [...PRORATIONS] },
  prorationAmount: {
    ...nullable({ type: "string", pattern: "^-?\\d+(\\.\\d*[1-9])?$" }),
    description: "PRORATE, once applied: what the change came to (positive: charged as the immediate charge; negative: credited to the subscription).",
  },
  currency: { type: "string", description: "The requested plan's currency (the immediate charge's)." },
  successUrl: { type: "string" },
  cancelUrl: { type: "string" },
  reason: nullable({ type: "string" }),
  metadata: metadataSchema,
  expiresAt: { ...dateTimeSchema, description: "The approval link's expiry (60 minutes after create)." },
  scheduledFor: {
    ...nullable(dateTimeSchema),
    description: "NEXT_BILLING, once approved: the billing date the change takes effect at (later if the subscription is paused then).",
  },
  cancellationReason: nullable({ type: "string", enum: [...CHANGE_CANCELLATION_REASONS] }),
  supersededBy: { ...nullable(uuidSchema), description: "The change session whose approval replaced this scheduled one." },
  chargeId: { ...nullable(uuidSchema), description: "The immediate charge (see the subscription's charges)." },
  createdAt: dateTimeSchema,
  updatedAt: dateTimeSchema,
  version: recordVersionSchema,
  approvedAt: nullable(dateTimeSchema),
  appliedAt: nullable(dateTimeSchema),
  declinedAt: nullable(dateTimeSchema),
  expiredAt: nullable(dateTimeSchema),
  cancelledAt: nullable(dateTimeSchema),
  approvalUrl: {
    ...nullable({ type: "string", format: "uri" }),
    description: "The single-use hosted page to send the customer to, while the session is PENDING_APPROVAL; null afterwards.",
  },
} as const;

const changeSessionRequired = [
  "id",
  "object",
  "subscriptionId",
  "status",
  "currentPlanId",
  "requestedPlanId",
  "effectiveMode",
  "immediateChargeAmount",
  "currency",
  "successUrl",
  "cancelUrl",
  "reason",
  "metadata",
  "expiresAt",
  "scheduledFor",
  "createdAt",
  "updatedAt",
  "version",
  "approvalUrl",
];

export const changeSessionSchema = { type: "object", required: changeSessionRequired, properties: changeSessionProperties } as const;

export const createdChangeSessionSchema = {
  type: "object",
  required: changeSessionRequired,
  properties: {
    ...changeSessionProperties,
    approvalUrl: { type: "string", format: "uri", description: "The single-use hosted page: send the customer here." },
  },
} as const;

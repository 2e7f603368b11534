import {
  AUTHORIZATION_MINUTES,
  AUTHORIZATION_STATUSES,
  CANCELLATION_REASONS,
  SUBSCRIPTION_STATUSES,
  URL_MAX_LENGTH,
} from "../../services/subscriptions/contract.ts";
import {
  amountOutSchema,
  dateTimeSchema,
  emailSchema,
  metadataSchema,
  nullable,
  paginationQueryProperties,
  recordVersionSchema,
  uuidSchema,
} from "./common.ts";

/** Redirect targets: absolute http(s) URLs (the customer's browser is sent there). */
const redirectUrlSchema = { type: "string", format: "uri", pattern: "^https?://", maxLength: URL_MAX_LENGTH } as const;

export const createSubscriptionBody = {
  type: "object",
  additionalProperties: false,
  required: ["externalReference", "planId", "successUrl", "cancelUrl"],
  description:
    "At least one of `walletUserId` or `customerEmail` is required (400 otherwise); when both are given they must name the same wallet user (400 otherwise).",
  properties: {
    externalReference: {
      type: "string",
      minLength: 1,
      maxLength: 200,
      description: "Your reference; unique among your live (not cancelled or expired) subscriptions (409 SUBSCRIPTION_ALREADY_EXISTS).",
    },
    serviceReference: { type: "string", maxLength: 200 },
    planId: { ...uuidSchema, description: "One of your plans (404 PLAN_NOT_FOUND otherwise)." },
    walletUserId: { ...uuidSchema, description: "The customer's wallet user id (404 WALLET_USER_NOT_FOUND when unknown)." },
    customerEmail: {
      ...emailSchema,
      description: "Email of an existing wallet user (404 WALLET_USER_NOT_FOUND when unknown); stored trimmed, as sent otherwise.",
    },
    successUrl: { ...redirectUrlSchema, description: "Where the customer returns after approval, with `subscriptionId` and `status` query parameters." },
    cancelUrl: { ...redirectUrlSchema, description: "Where the customer returns after cancelling on the authorization page." },
    authorizationExpiresInMinutes: {
      type: "integer",
      minimum: AUTHORIZATION_MINUTES.min,
      maximum: AUTHORIZATION_MINUTES.max,
      default: AUTHORIZATION_MINUTES.default,
    },
    metadata: metadataSchema,
    couponId: {
      ...uuidSchema,
      description: "A discount from the first charge (not with `promotionCode`): 404 COUPON_NOT_FOUND, 409 COUPON_NOT_APPLICABLE with the reason.",
    },
    promotionCode: {
      type: "string",
      minLength: 1,
      maxLength: 50,
      description: "A promotion code, any case (not with `couponId`): 404 PROMOTION_CODE_NOT_FOUND, 409 COUPON_NOT_APPLICABLE.",
    },
  },
} as const;

export const createdSubscriptionSchema = {
  type: "object",
  required: ["subscriptionId", "status", "authorizationUrl", "authorizationExpiresAt"],
  properties: {
    subscriptionId: uuidSchema,
    status: { const: "PENDING_APPROVAL" },
    authorizationUrl: { type: "string", format: "uri", description: "Single-use hosted page; redirect the customer here. Shown only in this response." },
    authorizationExpiresAt: dateTimeSchema,
  },
} as const;

export const listSubscriptionsQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    status: { type: "string", enum: [...SUBSCRIPTION_STATUSES] },
    planId: uuidSchema,
    walletUserId: uuidSchema,
    externalReference: { type: "string", maxLength: 200 },
  },
} as const;

const authorizationSchema = {
  type: "object",
  required: ["id", "status", "expiresAt", "approvedAt", "declinedAt", "expiredAt", "createdAt"],
  properties: {
    id: uuidSchema,
    status: { type: "string", enum: [...AUTHORIZATION_STATUSES] },
    expiresAt: dateTimeSchema,
    approvedAt: nullable(dateTimeSchema),
    declinedAt: nullable(dateTimeSchema),
    expiredAt: nullable(dateTimeSchema),
    createdAt: dateTimeSchema,
  },
} as const;

export const subscriptionSchema = {
  type: "object",
  required: [
    "id",
    "object",
    "planId",
    "status",
    "externalReference",
    "walletUserId",
    "successUrl",
    "cancelUrl",
    "metadata",
    "authorizationExpiresInMinutes",
    "fundingAsset",
    "authorization",
    "createdAt",
    "updatedAt",
    "version",
  ],
  properties: {
    id: uuidSchema,
    object: { const: "subscription" },
    planId: uuidSchema,
    status: { type: "string", enum: [...SUBSCRIPTION_STATUSES] },
    externalReference: { type: "string" },
    serviceReference: nullable({ type: "string" }),
    walletUserId: uuidSchema,
    customerEmail: nullable({ type: "string" }),
    successUrl: { type: "string" },
    cancelUrl: { type: "string" },
    metadata: metadataSchema,
    authorizationExpiresInMinutes: { ...nullable({ type: "integer" }), description: "The authorization's lifetime as requested (default 60)." },
    fundingAsset: { ...nullable({ type: "string" }), description: "Asset code the customer pays with; null until approved." },
    fallbackAssets: {
      type: "array",
      maxItems: 2,
      items: { type: "string" },
      description: "Assets the customer chose to pay from, in order, when the funding asset cannot pay a renewal or retry ([] when none).",
    },
    billingAnchor: { ...nullable(dateTimeSchema), description: "First billing date; period boundaries are computed from it." },
    currentPeriodStart: nullable(dateTimeSchema),
    currentPeriodEnd: nullable(dateTimeSchema),
    nextBillingAt: nullable(dateTimeSchema),
    trialEnd: nullable(dateTimeSchema),
    cancellationReason: nullable({ type: "string", enum: [...CANCELLATION_REASONS] }),
    authorization: { ...nullable(authorizationSchema), description: "The customer authorization (current one)." },
    createdAt: dateTimeSchema,
    updatedAt: dateTimeSchema,
    version: recordVersionSchema,
    activatedAt: nullable(dateTimeSchema),
    pausedAt: nullable(dateTimeSchema),
    cancelledAt: nullable(dateTimeSchema),
    expiredAt: nullable(dateTimeSchema),
    pastDueSince: { ...nullable(dateTimeSchema), description: "When the current run of failed renewal charges began (PAST_DUE, UNPAID)." },
    nextRetryAt: { ...nullable(dateTimeSchema), description: "The next scheduled retry of the failed renewal; null unless PAST_DUE." },
    unpaidAt: { ...nullable(dateTimeSchema), description: "When the last retry failed and the subscription became UNPAID." },
    discount: {
      ...nullable({
        type: "object",
        required: ["couponId", "promotionCode", "start", "periodsRemaining"],
        properties: {
          couponId: uuidSchema,
          promotionCode: {
            ...nullable({ type: "string" }),
            description: "The code it was applied with, as the merchant created it; null when applied by `couponId`.",
          },
          start: { ...nullable(dateTimeSchema), description: "When it was applied." },
          periodsRemaining: { ...nullable({ type: "integer", minimum: 1 }), description: "Charges still discounted; null: FOREVER." },
        },
      }),
      description: "The discount applied to the next charges (issue 25), or null.",
    },
    creditBalance: {
      ...amountOutSchema,
      description: "Credit in the plan's currency (a prorated downgrade), spent by the next charges before any money moves.",
    },
  },
} as const;

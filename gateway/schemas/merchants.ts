import { MERCHANT_RATE_LIMIT_MAX, MERCHANT_RATE_LIMIT_MIN } from "../../services/merchants/contract.ts";
import { amountOutSchema, amountSchema, dateTimeSchema, nullable, uuidSchema } from "./common.ts";

export const createMerchantBody = {
  type: "object",
  additionalProperties: false,
  required: ["name"],
  properties: { name: { type: "string", minLength: 1, maxLength: 200 } },
} as const;

export const createdMerchantSchema = {
  type: "object",
  required: ["id", "name", "apiKey"],
  properties: {
    id: uuidSchema,
    name: { type: "string" },
    apiKey: { type: "string", description: "Shown once; only its SHA-256 digest is stored." },
    apiKeyId: uuidSchema,
    createdAt: dateTimeSchema,
  },
} as const;

export const createdApiKeySchema = {
  type: "object",
  required: ["id", "apiKey"],
  properties: { id: uuidSchema, apiKey: { type: "string", description: "Shown once." } },
} as const;

const rateLimitField = (description: string) => ({
  anyOf: [{ type: "integer", minimum: MERCHANT_RATE_LIMIT_MIN, maximum: MERCHANT_RATE_LIMIT_MAX }, { type: "null" }],
  description,
});

export const updateMerchantBody = {
  type: "object",
  additionalProperties: false,
  minProperties: 1,
  properties: {
    rateLimitPerSecond: rateLimitField("Token refill per second of this merchant's /api/v1 bucket; null = RATE_LIMIT_PER_SECOND."),
    rateLimitBurst: rateLimitField("Capacity of this merchant's /api/v1 bucket; null = RATE_LIMIT_BURST."),
    payoutReviewAbove: {
      ...nullable(amountSchema),
      description:
        "Payouts worth more than this many USD (converted with the wallet's rates) wait IN_REVIEW until an operator approves or rejects them; null = no review.",
    },
    receiptPrefix: {
      type: "string",
      pattern: "^[A-Z0-9][A-Z0-9-]{0,19}$",
      description:
        "Prefix of the merchant's receipt numbers (`{prefix}-000001`), 1–20 of A–Z, 0–9, -; only before its first receipt (409 RECEIPT_PREFIX_LOCKED). Default: R + the first 8 hex digits of the merchant id.",
    },
  },
} as const;

export const merchantSchema = {
  type: "object",
  required: ["id", "name", "createdAt", "rateLimitPerSecond", "rateLimitBurst", "payoutReviewAbove"],
  properties: {
    id: uuidSchema,
    name: { type: "string" },
    createdAt: dateTimeSchema,
    rateLimitPerSecond: { ...nullable({ type: "integer" }), description: "The merchant's own limit; null = the default." },
    rateLimitBurst: { ...nullable({ type: "integer" }), description: "The merchant's own bucket size; null = the default." },
    payoutReviewAbove: { ...nullable(amountOutSchema), description: "USD; payouts worth more wait IN_REVIEW; null = none." },
    receiptPrefix: { type: "string", description: "Present when the PATCH set it." },
  },
} as const;

export const inviteMemberBody = {
  type: "object",
  additionalProperties: false,
  required: ["email", "role"],
  properties: {
    email: { type: "string", format: "email", maxLength: 254 },
    role: { type: "string", enum: ["OWNER", "ADMIN", "DEVELOPER", "SUPPORT", "VIEWER"] },
  },
} as const;

const memberSchema = {
  type: "object",
  required: ["id", "object", "email", "role", "status", "createdAt"],
  properties: {
    id: uuidSchema,
    object: { type: "string", enum: ["member"] },
    email: { type: "string" },
    role: { type: "string", enum: ["OWNER", "ADMIN", "DEVELOPER", "SUPPORT", "VIEWER"] },
    status: { type: "string", enum: ["INVITED", "ACTIVE"] },
    totpEnabled: { type: "boolean" },
    createdAt: dateTimeSchema,
  },
} as const;

export const invitedMemberSchema = {
  type: "object",
  required: [...memberSchema.required, "inviteUrl"],
  properties: {
    ...memberSchema.properties,
    inviteUrl: { type: "string", format: "uri", description: "Single use, valid 7 days; shown once (only a digest of its token is stored)." },
  },
} as const;

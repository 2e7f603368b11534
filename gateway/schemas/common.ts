import type { JsonSchema } from "../route.ts";
import { EMAIL_MAX, EMAIL_PATTERN } from "../../services/platform/email.ts";

/** The spec's amount rule, plus the storage bound (numeric(38,18)). */
export const amountSchema = {
  type: "string",
  pattern: "^\\d+(\\.\\d{1,18})?$",
  "x-storable-amount": true,
  description: "Non-negative decimal string, at most 18 fraction digits and 20 integer digits.",
  examples: ["19.99"],
} as const;

/** Amounts in responses: canonical decimal strings (no exponent, no trailing fraction zeros). */
export const amountOutSchema = { type: "string", pattern: "^\\d+(\\.\\d*[1-9])?$", examples: ["19.99"] } as const;

export const metadataSchema = {
  type: "object",
  description: "Free-form key/value data, stored and returned as given.",
  additionalProperties: true,
} as const;

/**
 * An email address: the services' one rule (services/platform/email.ts), which trims surrounding spaces.
 * A pattern rather than `format: "email"`, which refuses the spaces the docs promise to trim (docs/merchant-api.md); the
 * length bound leaves room for them (the service bounds the trimmed address to EMAIL_MAX).
 */
export const emailSchema = {
  type: "string",
  pattern: `^\\s*${EMAIL_PATTERN}\\s*$`,
  maxLength: EMAIL_MAX + 100,
  description: "An email address (local@domain.tld); surrounding spaces are trimmed, compared case-insensitively.",
} as const;

export const uuidSchema = { type: "string", format: "uuid" } as const;
export const dateTimeSchema = { type: "string", format: "date-time" } as const;

/** `version` of subscriptions, change sessions and payment orders (services/platform/record-version.ts). */
export const recordVersionSchema = {
  type: "integer",
  minimum: 1,
  description:
    "1 at creation, raised by one with each change, in the same commit as the change's event (whose data carries it). Webhooks may arrive out of order: keep the highest version you hold per object and drop an event whose version is not newer than it.",
} as const;
export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: "null" }] });

export const errorSchema = {
  type: "object",
  required: ["error", "message"],
  properties: {
    error: { type: "string", description: "Machine-readable error code, e.g. PLAN_NOT_FOUND." },
    message: { type: "string", description: "What was wrong, naming the field and the rule." },
    details: {
      type: "array",
      items: {
        type: "object",
        properties: { field: { type: "string" }, rule: { type: "string" }, message: { type: "string" } },
      },
    },
  },
} as const;

export const paginationQueryProperties = {
  limit: { type: "integer", minimum: 1, maximum: 100, default: 20, description: "Page size." },
  cursor: { type: "string", maxLength: 500, description: "`nextCursor` of the previous page." },
} as const;

export function pageSchema(item: JsonSchema): JsonSchema {
  return {
    type: "object",
    required: ["data", "hasMore", "nextCursor"],
    properties: {
      data: { type: "array", items: item },
      hasMore: { type: "boolean" },
      nextCursor: { type: ["string", "null"] },
    },
  };
}

export function toPageBody<T, R>(page: { items?: T[]; hasMore: boolean; nextCursor?: string | undefined }, items: R[]) {
  return { data: items, hasMore: page.hasMore, nextCursor: page.nextCursor ?? null };
}

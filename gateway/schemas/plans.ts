import { CURRENCIES } from "../../services/platform/currencies.ts";
import { PLAN_INTERVALS } from "../../services/catalog/contract.ts";
import { amountOutSchema, amountSchema, dateTimeSchema, metadataSchema, nullable, paginationQueryProperties, uuidSchema } from "./common.ts";

export const createPlanBody = {
  type: "object",
  additionalProperties: false,
  required: ["name", "amount", "currency", "interval"],
  properties: {
    externalReference: { type: "string", maxLength: 200 },
    name: { type: "string", minLength: 1, maxLength: 200 },
    description: { type: "string", maxLength: 2000 },
    amount: { ...amountSchema, description: "Charged every period; greater than 0 (free plans are refused)." },
    currency: { type: "string", enum: [...CURRENCIES] },
    interval: { type: "string", enum: [...PLAN_INTERVALS] },
    intervalCount: { type: "integer", minimum: 1, maximum: 365, default: 1 },
    trialDays: { type: "integer", minimum: 0, maximum: 365, default: 0 },
    maximumChargeAmount: { ...amountSchema, description: "The most a single charge of a subscription to this plan may take, in the plan's currency; at least `amount`." },
    metadata: metadataSchema,
  },
} as const;

export const listPlansQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    externalReference: { type: "string", maxLength: 200 },
    currency: { type: "string", enum: [...CURRENCIES] },
    interval: { type: "string", enum: [...PLAN_INTERVALS] },
  },
} as const;

export const planSchema = {
  type: "object",
  required: ["id", "object", "name", "amount", "currency", "interval", "intervalCount", "trialDays", "metadata", "status", "createdAt", "updatedAt"],
  properties: {
    id: uuidSchema,
    object: { const: "plan" },
    externalReference: nullable({ type: "string" }),
    name: { type: "string" },
    description: nullable({ type: "string" }),
    amount: amountOutSchema,
    currency: { type: "string" },
    interval: { type: "string", enum: [...PLAN_INTERVALS] },
    intervalCount: { type: "integer" },
    trialDays: { type: "integer" },
    maximumChargeAmount: nullable(amountOutSchema),
    metadata: metadataSchema,
    status: { type: "string", enum: ["ACTIVE"] },
    createdAt: dateTimeSchema,
    updatedAt: dateTimeSchema,
  },
} as const;

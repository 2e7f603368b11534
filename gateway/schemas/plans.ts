import { CURRENCIES } from "../../services/platform/currencies.ts";
import { PLAN_IMMUTABLE_FIELDS, PLAN_IMMUTABLE_MESSAGE, PLAN_INTERVALS, PLAN_STATUSES } from "../../services/catalog/contract.ts";
import { amountOutSchema, amountSchema, dateTimeSchema, metadataSchema, nullable, paginationQueryProperties, uuidSchema } from "./common.ts";

export const createPlanBody = {
  type: "object",
  additionalProperties: false,
  required: ["name", "amount", "currency", "interval"],
  properties: {
    externalReference: { type: "string", maxLength: 200 },
    name: { type: "string", minLength: 1, maxLength: 200 },
    description: { type: "string", maxLength: 2000 },
    amount: {
      ...amountSchema,
      description:
        'Charged every period; `"0"` is a free plan (each period is recorded as a zero charge, SUCCEEDED, with no ledger movement), and at most 99999999999999999999 (a charge rounds it up to the paying asset\'s smallest unit and must stay below 10^20).',
    },
    currency: { type: "string", enum: [...CURRENCIES] },
    interval: { type: "string", enum: [...PLAN_INTERVALS] },
    intervalCount: { type: "integer", minimum: 1, maximum: 365, default: 1 },
    trialDays: { type: "integer", minimum: 0, maximum: 365, default: 0 },
    maximumChargeAmount: {
      ...amountSchema,
      description: "The most a single charge of a subscription to this plan may take, in the plan's currency; at least `amount`.",
    },
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
    status: { type: "string", enum: [...PLAN_STATUSES], description: "ACTIVE or ARCHIVED; both when absent." },
  },
} as const;

const immutable = (field: string) => ({
  "x-immutable": PLAN_IMMUTABLE_MESSAGE,
  description: `Not accepted: ${field} never changes. Create a new plan and move subscriptions to it with a change session.`,
});

/** Descriptive fields only (same rules as create); `null` clears description / externalReference; metadata replaces the old object. */
export const updatePlanBody = {
  type: "object",
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: { type: "string", minLength: 1, maxLength: 200 },
    description: { type: ["string", "null"], maxLength: 2000 },
    externalReference: { type: ["string", "null"], maxLength: 200 },
    metadata: metadataSchema,
    ...Object.fromEntries(PLAN_IMMUTABLE_FIELDS.map((f) => [f, immutable(f)])),
  },
} as const;

export const planSchema = {
  type: "object",
  required: [
    "id",
    "object",
    "name",
    "amount",
    "currency",
    "interval",
    "intervalCount",
    "trialDays",
    "metadata",
    "status",
    "archivedAt",
    "createdAt",
    "updatedAt",
  ],
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
    status: { type: "string", enum: [...PLAN_STATUSES] },
    archivedAt: { ...nullable(dateTimeSchema), description: "When the plan was archived (null while ACTIVE)." },
    createdAt: dateTimeSchema,
    updatedAt: dateTimeSchema,
  },
} as const;

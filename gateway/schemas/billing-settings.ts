import { BILLING_SETTINGS_LIMITS, DUNNING_FINAL_STATUSES } from "../../services/subscriptions/contract.ts";

const { retryDays, noticeDays } = BILLING_SETTINGS_LIMITS;

const retryDaysSchema = {
  type: "array",
  minItems: retryDays.minItems,
  maxItems: retryDays.maxItems,
  uniqueItems: true,
  items: { type: "integer", minimum: retryDays.minDay, maximum: retryDays.maxDay },
  description:
    "Days after a renewal's first failure on which it is retried, strictly increasing (the service refuses any other order). " +
    "The period's attempt budget is 1 + the number of days.",
  examples: [[1, 3, 5]],
} as const;

const customerEmailsSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    upcomingCharge: { type: "boolean" },
    paymentFailed: { type: "boolean" },
    receipt: { type: "boolean" },
  },
  description: "Which emails your customers receive from us (stored; sending follows with the emails feature).",
} as const;

/** PATCH: any subset of the fields; customerEmails is merged key by key. */
export const updateBillingSettingsBody = {
  type: "object",
  additionalProperties: false,
  minProperties: 1,
  properties: {
    dunningRetryDays: retryDaysSchema,
    dunningFinalStatus: { type: "string", enum: [...DUNNING_FINAL_STATUSES] },
    chargeNoticeDays: {
      type: "integer",
      minimum: noticeDays.min,
      maximum: noticeDays.max,
      description: "Days before each renewal that subscription.charge_upcoming is recorded; 0 = never.",
    },
    retryOnTopUp: { type: "boolean", description: "A top-up (or a new funding asset) that covers the amount due retries a PAST_DUE subscription at once." },
    customerEmails: customerEmailsSchema,
  },
} as const;

export const billingSettingsSchema = {
  type: "object",
  required: ["object", "dunningRetryDays", "dunningFinalStatus", "chargeNoticeDays", "retryOnTopUp", "customerEmails"],
  properties: {
    object: { const: "billing_settings" },
    dunningRetryDays: retryDaysSchema,
    dunningFinalStatus: { type: "string", enum: [...DUNNING_FINAL_STATUSES] },
    chargeNoticeDays: { type: "integer" },
    retryOnTopUp: { type: "boolean" },
    customerEmails: { ...customerEmailsSchema, required: ["upcomingCharge", "paymentFailed", "receipt"] },
  },
} as const;

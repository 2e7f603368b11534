import { REFUND_REASON_MAX_LENGTH, VISIBLE_REFUND_STATUSES } from "../../services/subscriptions/refunds/contract.ts";
import { amountOutSchema, amountSchema, dateTimeSchema, metadataSchema, nullable, paginationQueryProperties, uuidSchema } from "./common.ts";

export const createRefundBody = {
  type: "object",
  additionalProperties: false,
  required: ["chargeId"],
  properties: {
    chargeId: { ...uuidSchema, description: "A SUCCEEDED subscription charge of yours: first payment, renewal, retry or plan-change charge." },
    amount: {
      ...amountSchema,
      description: "In the charge's `currency`, greater than 0. Default: everything not yet refunded.",
    },
    reason: { type: "string", maxLength: REFUND_REASON_MAX_LENGTH, description: "Why, for your records (not shown to the customer)." },
    metadata: metadataSchema,
  },
} as const;

export const listRefundsQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    chargeId: { ...uuidSchema, description: "Only refunds of this charge." },
    subscriptionId: { ...uuidSchema, description: "Only refunds of this subscription's charges." },
  },
} as const;

export const refundSchema = {
  type: "object",
  required: ["id", "object", "chargeId", "subscriptionId", "amount", "currency", "asset", "assetAmount", "status", "reason", "metadata", "createdAt"],
  description: "The same record as the `refund` of subscription.charge_refunded events.",
  properties: {
    id: { ...uuidSchema, description: "Also the wallet's idempotency key for the movement (`refund-<id>`)." },
    object: { const: "refund" },
    chargeId: uuidSchema,
    subscriptionId: uuidSchema,
    amount: { ...amountOutSchema, description: "In the charge's currency." },
    currency: { type: "string" },
    asset: { type: "string", description: "The asset that was charged, and is given back." },
    assetAmount: {
      ...amountOutSchema,
      description:
        "Exactly what went back to the customer's wallet account: `amount` at the charge's `rate`, rounded down; the last refund of a charge returns exactly what remains.",
    },
    status: { type: "string", enum: [...VISIBLE_REFUND_STATUSES], description: "SUCCEEDED; PENDING only while the wallet moves the money." },
    reason: nullable({ type: "string" }),
    metadata: metadataSchema,
    createdAt: dateTimeSchema,
  },
} as const;

import { CURRENCIES } from "../../services/platform/currencies.ts";
import { ASSET_CODES } from "../../services/wallet/contract.ts";
import { CONFIRMATIONS_MAX, EXPIRES_IN_MINUTES, ORDER_STATUSES } from "../../services/orders/contract.ts";
import { amountSchema, dateTimeSchema, metadataSchema, nullable, paginationQueryProperties, recordVersionSchema, uuidSchema } from "./common.ts";

/** Merchant references: no control characters (they end up in URLs, logs, exports). */
const referenceSchema = { type: "string", minLength: 1, maxLength: 200, pattern: "^[^\\u0000-\\u001f\\u007f]+$" } as const;
const assetSchema = {
  type: "string",
  enum: [...ASSET_CODES],
  description: "An asset of the registry; the code names the network too (USDT_TRON is USDT on TRON).",
} as const;
/** Asset amounts in responses: fixed-scale at the asset's decimals ("0.00166667", "10.000000"). */
const assetAmountOutSchema = { type: "string", pattern: "^\\d+(\\.\\d+)?$", examples: ["10.000000"] } as const;

/**
 * Required, and why: `externalId` is the merchant's reconciliation key and
 * what makes a retried create safe; `externalCustomerId` ties the payment to
 * the merchant's customer (list filter, support, compliance); `asset` picks
 * the network and so the address; `amount` is what is owed. `currency` is
 * optional because it appears only in some request forms: with it, `amount`
 * is in that currency and converted at the current rate; without it,
 * `amount` is in the asset itself.
 */
export const createPaymentOrderBody = {
  type: "object",
  additionalProperties: false,
  required: ["externalId", "externalCustomerId", "asset", "amount"],
  properties: {
    externalId: {
      ...referenceSchema,
      description:
        "Your unique reference for this order (unique per merchant). Retrying with the same externalId and the same body returns the existing order.",
    },
    externalCustomerId: { ...referenceSchema, description: "Your stable reference of the paying customer." },
    asset: assetSchema,
    amount: {
      ...amountSchema,
      description:
        "Greater than 0. In `currency` when given (converted at the current rate, rounded up to the asset's decimals); otherwise in the asset, with at most the asset's decimals.",
    },
    currency: { type: "string", enum: [...CURRENCIES], description: "The currency `amount` is priced in; omit it to give `amount` in the asset." },
    expiresInMinutes: {
      type: "integer",
      minimum: EXPIRES_IN_MINUTES.min,
      maximum: EXPIRES_IN_MINUTES.max,
      default: EXPIRES_IN_MINUTES.default,
      description: "Lifetime of the order: 5 minutes (one block on slow chains) to 1440 (one day: a quoted rate should not be honoured longer). Default 30.",
    },
    underpaymentTolerancePercent: {
      type: "string",
      pattern: "^(10(\\.0{1,2})?|\\d(\\.\\d{1,2})?)$",
      default: "0",
      description: "A payment short by at most this percent of amountToPay counts as paid (network fees taken by the sender's wallet). 0 to 10, default 0.",
    },
    metadata: metadataSchema,
  },
} as const;

export const listPaymentOrdersQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    status: { type: "string", enum: [...ORDER_STATUSES] },
    externalCustomerId: { ...referenceSchema, description: "Only this customer's orders." },
  },
} as const;

const paymentSchema = {
  type: "object",
  required: ["txId", "amount", "confirmations", "late", "seenAt", "updatedAt"],
  properties: {
    txId: { type: "string" },
    amount: assetAmountOutSchema,
    confirmations: { type: "integer" },
    late: { type: "boolean", description: "Arrived after the order expired: recorded, not counted toward amountPaid." },
    seenAt: dateTimeSchema,
    updatedAt: dateTimeSchema,
  },
} as const;

export const paymentOrderSchema = {
  type: "object",
  required: [
    "id",
    "object",
    "externalId",
    "externalCustomerId",
    "asset",
    "network",
    "address",
    "amountToPay",
    "amount",
    "currency",
    "rate",
    "rateAt",
    "status",
    "expiresAt",
    "amountPaid",
    "overpaidAmount",
    "latePayment",
    "amountPaidLate",
    "amountRefunded",
    "underpaymentTolerancePercent",
    "requiredConfirmations",
    "payments",
    "metadata",
    "paidAt",
    "expiredAt",
    "settledAt",
    "createdAt",
    "updatedAt",
    "version",
  ],
  properties: {
    id: uuidSchema,
    object: { const: "payment_order" },
    externalId: { type: "string" },
    externalCustomerId: { type: "string" },
    asset: { type: "string" },
    network: { type: "string" },
    address: { type: "string", description: "A fresh deposit address, used by this order only." },
    amountToPay: { ...assetAmountOutSchema, description: "The exact amount to send, at the asset's decimals." },
    amount: { type: "string", description: "The amount as requested (in `currency`, or in the asset)." },
    currency: nullable({ type: "string" }),
    rate: nullable({ type: "string", description: "Asset units per currency unit used for amountToPay." }),
    rateAt: nullable(dateTimeSchema),
    status: { type: "string", enum: [...ORDER_STATUSES] },
    expiresAt: dateTimeSchema,
    amountPaid: { ...assetAmountOutSchema, description: "Sum of the transfers received before expiry." },
    overpaidAmount: { ...assetAmountOutSchema, description: "amountPaid beyond amountToPay; above 0 means overpaid." },
    latePayment: { type: "boolean", description: "A transfer arrived after expiry." },
    amountPaidLate: assetAmountOutSchema,
    amountRefunded: { ...assetAmountOutSchema, description: "What refunds of this order gave back or have on their way (AWAITING_ADDRESS, PROCESSING, PAID)." },
    underpaymentTolerancePercent: { type: "string" },
    requiredConfirmations: { type: "integer" },
    payments: { type: "array", items: paymentSchema },
    metadata: metadataSchema,
    paidAt: nullable(dateTimeSchema),
    expiredAt: nullable(dateTimeSchema),
    settledAt: nullable({ ...dateTimeSchema, description: "When the payment was credited to your balance." }),
    createdAt: dateTimeSchema,
    updatedAt: dateTimeSchema,
    version: recordVersionSchema,
  },
} as const;

export const paymentOrderStatusSchema = {
  type: "object",
  required: ["id", "externalId", "status", "amountToPay", "amountPaid", "expiresAt", "updatedAt", "version"],
  properties: {
    id: uuidSchema,
    externalId: { type: "string" },
    status: { type: "string", enum: [...ORDER_STATUSES] },
    amountToPay: assetAmountOutSchema,
    amountPaid: assetAmountOutSchema,
    expiresAt: dateTimeSchema,
    updatedAt: dateTimeSchema,
    version: recordVersionSchema,
  },
} as const;

export const reportDepositBody = {
  type: "object",
  additionalProperties: false,
  required: ["address", "asset", "amount", "txId"],
  properties: {
    address: { type: "string", minLength: 1, maxLength: 128, pattern: "^[\\x21-\\x7e]+$" },
    asset: assetSchema,
    amount: { ...amountSchema, description: "Greater than 0, at most the asset's decimals." },
    txId: { type: "string", minLength: 1, maxLength: 200, pattern: "^[\\x21-\\x7e]+$" },
    confirmations: { type: "integer", minimum: 0, maximum: CONFIRMATIONS_MAX, default: 0 },
  },
} as const;

export const depositResultSchema = {
  type: "object",
  required: ["outcome", "order"],
  properties: {
    outcome: { type: "string", enum: ["RECORDED", "UPDATED", "DUPLICATE"], description: "New transfer, more confirmations of a known one, or nothing new." },
    order: paymentOrderSchema,
  },
} as const;

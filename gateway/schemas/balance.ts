import { ASSET_CODES, BALANCE_TRANSACTION_TYPES } from "../../services/wallet/contract.ts";
import { amountOutSchema, dateTimeSchema, nullable, paginationQueryProperties, uuidSchema } from "./common.ts";

export const balanceObjectSchema = {
  type: "object",
  required: ["object", "available", "pending"],
  properties: {
    object: { const: "balance" },
    available: {
      type: "array",
      description: "One entry per asset your ledger account holds (any asset that ever moved), in registry order.",
      items: {
        type: "object",
        required: ["asset", "amount"],
        properties: { asset: { type: "string", enum: [...ASSET_CODES] }, amount: amountOutSchema },
      },
    },
    pending: {
      type: "array",
      description: "Payouts in flight per asset (amount + fee), only assets with some, in registry order.",
      items: {
        type: "object",
        required: ["asset", "amount"],
        properties: { asset: { type: "string", enum: [...ASSET_CODES] }, amount: amountOutSchema },
      },
    },
  },
} as const;

/** Signed amounts: refunds are negative. */
const signedAmountSchema = { type: "string", pattern: "^-?\\d+(\\.\\d*[1-9])?$", examples: ["-0.00041666"] } as const;

export const listBalanceTransactionsQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    asset: { type: "string", enum: [...ASSET_CODES], description: "Only movements in this asset." },
    type: { type: "string", enum: [...BALANCE_TRANSACTION_TYPES], description: "Only movements of this type." },
    createdAfter: { ...dateTimeSchema, description: "Only movements strictly after this instant (RFC 3339)." },
  },
} as const;

export const balanceTransactionSchema = {
  type: "object",
  required: ["id", "object", "type", "asset", "amount", "balanceAfter", "sourceType", "sourceId", "createdAt"],
  properties: {
    id: { ...uuidSchema, description: "The ledger entry on your account." },
    object: { const: "balance_transaction" },
    type: {
      type: "string",
      enum: [...BALANCE_TRANSACTION_TYPES],
      description:
        "SUBSCRIPTION_CHARGE (a subscription charge received), REFUND (given back, negative), PAYMENT_ORDER (a paid order, or a late/extra payment credited), PAYOUT (a payout's amount + fee, negative), PAYOUT_REVERSAL (a FAILED or CANCELLED payout's amount + fee back), ORDER_REFUND (reserved for refunds of payment orders), ADJUSTMENT (an operator correction; none exist today).",
    },
    asset: { type: "string" },
    amount: { ...signedAmountSchema, description: "Signed: positive entered your account, negative left it." },
    balanceAfter: { ...amountOutSchema, description: "Your balance in this asset right after this movement." },
    sourceType: { ...nullable({ type: "string", enum: ["subscription_charge", "refund", "payment_order", "payout"] }), description: "What caused it." },
    sourceId: { ...nullable(uuidSchema), description: "Its id: the charge, the refund or the payment order." },
    createdAt: dateTimeSchema,
  },
} as const;

import {
  ADDRESS_MAX_LENGTH,
  CLAIM_EXPIRES_DEFAULT_MINUTES,
  CLAIM_EXPIRES_MAX_MINUTES,
  CLAIM_EXPIRES_MIN_MINUTES,
  VISIBLE_ORDER_REFUND_STATUSES,
} from "../../services/payouts/contract.ts";
import { amountOutSchema, amountSchema, dateTimeSchema, nullable, paginationQueryProperties, uuidSchema } from "./common.ts";

export const createOrderRefundBody = {
  type: "object",
  additionalProperties: false,
  properties: {
    amount: {
      ...amountSchema,
      description:
        "In the order's asset, > 0, at most the asset's decimals, at least its payout minimum. Default: what the order's confirmed payments brought in minus refunds so far (for an OVERPAID order, pass `overpaidAmount` to give back only the excess).",
    },
    address: {
      type: "string",
      minLength: 1,
      maxLength: ADDRESS_MAX_LENGTH,
      description:
        "The customer's address on the order's network (the same rules as payout destinations; 400 naming `address` and the rule). Given: paid out at once, no cooling period. Absent: the answer carries `claimUrl` for the customer.",
    },
    expiresInMinutes: {
      type: "integer",
      minimum: CLAIM_EXPIRES_MIN_MINUTES,
      maximum: CLAIM_EXPIRES_MAX_MINUTES,
      description: `How long the claim link is valid (default ${CLAIM_EXPIRES_DEFAULT_MINUTES}, a week). An expired claim returns the reserved money to your balance.`,
    },
  },
} as const;

export const listOrderRefundsQuery = {
  type: "object",
  additionalProperties: false,
  properties: { ...paginationQueryProperties },
} as const;

export const orderRefundSchema = {
  type: "object",
  required: ["id", "object", "paymentOrderId", "asset", "amount", "fee", "status", "address", "claimUrl", "claimExpiresAt", "payoutId", "createdAt"],
  description: "The same record as the data of payment_order.refund_created, refunded, refund_failed and refund_expired.",
  properties: {
    id: uuidSchema,
    object: { const: "order_refund" },
    paymentOrderId: uuidSchema,
    asset: { type: "string" },
    amount: { ...amountOutSchema, description: "What the customer receives." },
    fee: nullable({ ...amountOutSchema, description: "The network fee, on top, from your balance (the asset's payout fee)." }),
    status: {
      type: "string",
      enum: [...VISIBLE_ORDER_REFUND_STATUSES],
      description:
        "AWAITING_ADDRESS (the claim link is open) → PROCESSING (its payout is on its way) → PAID or FAILED; AWAITING_ADDRESS → EXPIRED (nobody claimed it; the money is back).",
    },
    address: nullable({ type: "string", description: "The customer's address, canonical spelling." }),
    claimUrl: nullable({ type: "string", description: "{PUBLIC_BASE_URL}/claims/{token} while AWAITING_ADDRESS; give it to the customer." }),
    claimExpiresAt: nullable(dateTimeSchema),
    payoutId: nullable({ ...uuidSchema, description: "The payout (source ORDER_REFUND) once it has an address: GET /api/v1/payouts/{id}." }),
    createdAt: dateTimeSchema,
  },
} as const;

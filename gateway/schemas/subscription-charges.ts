import { CHARGE_STATUSES } from "../../services/subscriptions/contract.ts";
import { amountOutSchema, dateTimeSchema, nullable, paginationQueryProperties, uuidSchema } from "./common.ts";

export const listChargesQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    status: { type: "string", enum: [...CHARGE_STATUSES] },
  },
} as const;

/** The same record as the `charge` of subscription.charge_succeeded / charge_failed events. */
export const chargeSchema = {
  type: "object",
  required: [
    "id",
    "object",
    "subscriptionId",
    "periodIndex",
    "periodStart",
    "periodEnd",
    "amount",
    "currency",
    "asset",
    "assetAmount",
    "rate",
    "status",
    "failureReason",
    "attempt",
    "walletTransactionId",
    "createdAt",
    "amountRefunded",
    "assetAmountRefunded",
    "fundedByFallback",
    "subtotal",
    "discountAmount",
    "creditApplied",
    "couponId",
    "rateAt",
    "receiptNumber",
    "receiptUrl",
  ],
  properties: {
    id: { ...uuidSchema, description: "Also the wallet's idempotency key for this attempt (`subscription-charge-<id>`)." },
    object: { const: "subscription_charge" },
    subscriptionId: uuidSchema,
    periodIndex: { type: "integer", minimum: 0, description: "The billing period paid for: 0 is the first paid period." },
    periodStart: dateTimeSchema,
    periodEnd: dateTimeSchema,
    amount: {
      ...amountOutSchema,
      description:
        'In the plan\'s currency: `subtotal − discountAmount − creditApplied`, never below 0. `"0"` (free plan, 100 % discount, credit) is SUCCEEDED with no ledger movement.',
    },
    subtotal: { ...amountOutSchema, description: "The plan amount for the period (a plan change's charge: that charge), before discount and credit." },
    discountAmount: { ...amountOutSchema, description: "Taken off by the subscription's coupon (rounded up: in the customer's favour)." },
    creditApplied: { ...amountOutSchema, description: "Spent from the subscription's `creditBalance` (a prorated downgrade)." },
    couponId: { ...nullable(uuidSchema), description: "The coupon whose discount this charge used." },
    currency: { type: "string" },
    asset: { type: "string", description: "The asset debited: the funding asset, or the fallback that paid (`fundedByFallback`)." },
    assetAmount: { ...nullable(amountOutSchema), description: "Exact amount in the asset (the currency amount at `rate`, rounded up)." },
    rate: { ...nullable(amountOutSchema), description: "Asset units per currency unit used for this charge." },
    status: { type: "string", enum: [...CHARGE_STATUSES], description: "PENDING only while the wallet moves the money (seconds)." },
    failureReason: {
      ...nullable({ type: "string", enum: ["INSUFFICIENT_FUNDS", "ACCOUNT_FROZEN", "MAXIMUM_CHARGE_EXCEEDED", "CONVERSION_UNAVAILABLE"] }),
      description: "Why a FAILED attempt failed.",
    },
    attempt: { type: "integer", minimum: 1, description: "1 for the period's first attempt, then one more per retry." },
    walletTransactionId: { ...nullable({ type: "string" }), description: "The balanced ledger transaction of a SUCCEEDED charge." },
    createdAt: dateTimeSchema,
    amountRefunded: { ...amountOutSchema, description: 'Refunded so far, in the charge\'s currency ("0" when none).' },
    assetAmountRefunded: { ...amountOutSchema, description: "Refunded so far, in the asset: at most `assetAmount`, exactly it once fully refunded." },
    fundedByFallback: { type: "boolean", description: "True when one of the subscription's fallback assets paid because the funding asset could not." },
    rateAt: { ...nullable(dateTimeSchema), description: "When `rate` was observed." },
    receiptNumber: {
      ...nullable({ type: "string" }),
      description: "`{prefix}-{000001}`, gap-free per merchant in commit order; set on every SUCCEEDED charge above 0.",
    },
    receiptUrl: { ...nullable({ type: "string", format: "uri" }), description: "The customer's receipt link (unguessable; `{receiptUrl}.pdf` is the PDF)." },
  },
} as const;

import { COUPON_DURATIONS, COUPON_NAME_MAX, DURATION_IN_PERIODS, PROMOTION_CODE_PATTERN } from "../../services/subscriptions/pricing/contract.ts";
import { amountOutSchema, amountSchema, dateTimeSchema, metadataSchema, nullable, paginationQueryProperties, uuidSchema } from "./common.ts";
import { CURRENCIES } from "../../services/platform/currencies.ts";

const MAX_REDEMPTIONS = { type: "integer", minimum: 1, maximum: 1_000_000_000 } as const;

export const createCouponBody = {
  type: "object",
  additionalProperties: false,
  required: ["name", "duration"],
  description:
    "Exactly one of `percentOff` and `amountOff` (with its `currency`); `durationInPeriods` with `REPEATING` only. A bad combination is a 400 naming the field.",
  properties: {
    name: { type: "string", minLength: 1, maxLength: COUPON_NAME_MAX },
    percentOff: {
      ...amountSchema,
      description: "Percent taken off each discounted charge: greater than 0, at most 100 (the discount is rounded up, in the customer's favour).",
    },
    amountOff: { ...amountSchema, description: "Amount taken off each discounted charge, in `currency` (never below 0: the rest is not carried over)." },
    currency: { type: "string", enum: [...CURRENCIES], description: "Required with `amountOff`; the coupon then applies only to plans priced in it." },
    duration: {
      type: "string",
      enum: [...COUPON_DURATIONS],
      description: "ONCE: the next charge; REPEATING: `durationInPeriods` charges; FOREVER: every charge.",
    },
    durationInPeriods: { type: "integer", minimum: DURATION_IN_PERIODS.min, maximum: DURATION_IN_PERIODS.max },
    maxRedemptions: { ...MAX_REDEMPTIONS, description: "How many subscriptions may redeem it (never exceeded, also under concurrency)." },
    redeemBy: { ...dateTimeSchema, description: "No redemption after this instant (must be in the future)." },
    appliesToPlanIds: { type: "array", minItems: 1, maxItems: 100, items: uuidSchema, description: "Only subscriptions to these plans may redeem it." },
    metadata: metadataSchema,
  },
} as const;

export const couponSchema = {
  type: "object",
  required: [
    "id",
    "object",
    "name",
    "percentOff",
    "amountOff",
    "currency",
    "duration",
    "durationInPeriods",
    "maxRedemptions",
    "timesRedeemed",
    "redeemBy",
    "appliesToPlanIds",
    "metadata",
    "valid",
    "createdAt",
    "deletedAt",
  ],
  properties: {
    id: uuidSchema,
    object: { const: "coupon" },
    name: { type: "string" },
    percentOff: nullable(amountOutSchema),
    amountOff: nullable(amountOutSchema),
    currency: nullable({ type: "string" }),
    duration: { type: "string", enum: [...COUPON_DURATIONS] },
    durationInPeriods: nullable({ type: "integer" }),
    maxRedemptions: nullable({ type: "integer" }),
    timesRedeemed: { type: "integer", minimum: 0 },
    redeemBy: nullable(dateTimeSchema),
    appliesToPlanIds: nullable({ type: "array", items: uuidSchema }),
    metadata: metadataSchema,
    valid: { type: "boolean", description: "false once deleted: no new redemptions; discounts already applied run their course." },
    createdAt: dateTimeSchema,
    deletedAt: nullable(dateTimeSchema),
  },
} as const;

export const createPromotionCodeBody = {
  type: "object",
  additionalProperties: false,
  required: ["couponId", "code"],
  properties: {
    couponId: uuidSchema,
    code: {
      type: "string",
      pattern: PROMOTION_CODE_PATTERN,
      description: "3–50 of A–Z, 0–9 and -; case-insensitive and unique per merchant (409 PROMOTION_CODE_EXISTS); stored as sent.",
    },
    maxRedemptions: MAX_REDEMPTIONS,
    expiresAt: { ...dateTimeSchema, description: "No redemption after this instant (must be in the future)." },
    active: { type: "boolean", default: true },
  },
} as const;

export const promotionCodeSchema = {
  type: "object",
  required: ["id", "object", "couponId", "code", "maxRedemptions", "timesRedeemed", "expiresAt", "active", "createdAt"],
  properties: {
    id: uuidSchema,
    object: { const: "promotion_code" },
    couponId: uuidSchema,
    code: { type: "string" },
    maxRedemptions: nullable({ type: "integer" }),
    timesRedeemed: { type: "integer", minimum: 0 },
    expiresAt: nullable(dateTimeSchema),
    active: { type: "boolean" },
    createdAt: dateTimeSchema,
  },
} as const;

export const listCouponsQuery = { type: "object", additionalProperties: false, properties: { ...paginationQueryProperties } } as const;
export const listPromotionCodesQuery = {
  type: "object",
  additionalProperties: false,
  properties: { ...paginationQueryProperties, couponId: uuidSchema },
} as const;

export const discountBody = {
  type: "object",
  additionalProperties: false,
  description: "Exactly one of `couponId` and `promotionCode` (400 otherwise).",
  properties: {
    couponId: uuidSchema,
    promotionCode: { type: "string", minLength: 1, maxLength: 50, description: "A promotion code, any case." },
  },
} as const;

import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { CouponDuration } from "./contract.ts";

/** A merchant's coupon (migration 0026). Its terms never change; DELETE only stops new redemptions (valid = false). */
export const Coupon = defineEntity({
  name: "Coupon",
  tableName: "coupons",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    name: p.string().length(200),
    percentOff: p.decimal("string").nullable(),
    amountOff: p.decimal("string").precision(38).scale(18).nullable(),
    currency: p.string().length(16).nullable(),
    duration: p.string().length(16).$type<CouponDuration>(),
    durationInPeriods: p.integer().nullable(),
    maxRedemptions: p.integer().nullable(),
    timesRedeemed: p.integer().default(0),
    redeemBy: p.datetime().nullable(),
    appliesToPlanIds: p.json<string[]>().nullable(),
    metadata: p.json<Record<string, unknown>>(),
    valid: p.boolean().default(true),
    deletedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});

/** A customer-facing code for a coupon; matched case-insensitively, stored as sent. */
export const PromotionCode = defineEntity({
  name: "PromotionCode",
  tableName: "promotion_codes",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    couponId: p.uuid(),
    code: p.string().length(50),
    maxRedemptions: p.integer().nullable(),
    timesRedeemed: p.integer().default(0),
    expiresAt: p.datetime().nullable(),
    active: p.boolean().default(true),
    createdAt: p.datetime(),
  },
});

export type CouponRow = InferEntity<typeof Coupon>;
export type PromotionCodeRow = InferEntity<typeof PromotionCode>;

export const pricingEntities = [Coupon, PromotionCode];

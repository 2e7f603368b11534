import { formatAmount } from "../../platform/money.ts";
import { iso, isoOrNull } from "../../platform/timestamps.ts";
import type { CouponRow, PromotionCodeRow } from "./pricing-entities.ts";

/** The merchant-facing coupon: REST body and coupon.created's data. */
export function couponRecord(c: CouponRow) {
  return {
    id: c.id,
    object: "coupon" as const,
    name: c.name,
    percentOff: c.percentOff == null ? null : formatAmount(c.percentOff),
    amountOff: c.amountOff == null ? null : formatAmount(c.amountOff),
    currency: c.currency ?? null,
    duration: c.duration,
    durationInPeriods: c.durationInPeriods ?? null,
    maxRedemptions: c.maxRedemptions ?? null,
    timesRedeemed: c.timesRedeemed,
    redeemBy: isoOrNull(c.redeemBy),
    appliesToPlanIds: c.appliesToPlanIds ?? null,
    metadata: c.metadata,
    valid: c.valid,
    createdAt: iso(c.createdAt),
    deletedAt: isoOrNull(c.deletedAt),
  };
}

export function promotionCodeRecord(p: PromotionCodeRow) {
  return {
    id: p.id,
    object: "promotion_code" as const,
    couponId: p.couponId,
    code: p.code,
    maxRedemptions: p.maxRedemptions ?? null,
    timesRedeemed: p.timesRedeemed,
    expiresAt: isoOrNull(p.expiresAt),
    active: p.active,
    createdAt: iso(p.createdAt),
  };
}

import type { EntityManager } from "@mikro-orm/postgresql";
import { conflict, invalid } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import type { SubscriptionRow } from "../entities.ts";
import { Coupon, PromotionCode, type CouponRow, type PromotionCodeRow } from "./pricing-entities.ts";
import { couponNotFound } from "./coupons.ts";
import { promotionCodeNotFound } from "./promotion-codes.ts";
import { promotionCodeIdByCode, redeemCoupon, redeemPromotionCode } from "./discount-store.ts";

/** What a merchant names to discount a subscription: a coupon, or a customer's promotion code (not both). */
export interface DiscountRequest {
  couponId?: string | undefined;
  promotionCode?: string | undefined;
}

interface Redeemed {
  coupon: CouponRow;
  promotionCode: PromotionCodeRow | null;
}

export const hasDiscountRequest = (r: DiscountRequest): boolean => r.couponId !== undefined || r.promotionCode !== undefined;

/** 400 unless exactly one of couponId and promotionCode is given (`required`: at least one). */
export function checkDiscountRequest(r: DiscountRequest, required: boolean): void {
  if (r.couponId !== undefined && r.promotionCode !== undefined) throw invalid("INVALID_REQUEST", "couponId: send couponId or promotionCode, not both");
  if (required && !hasDiscountRequest(r)) throw invalid("INVALID_REQUEST", "couponId: one of couponId or promotionCode is required");
}

const notApplicable = (reason: string) => conflict("COUPON_NOT_APPLICABLE", reason);

/**
 * Redeems a coupon (through its promotion code, when one is named) for a
 * subscription to `plan`, inside the caller's transaction: the static rules
 * first (not for this plan, currency differs), then one conditional update per
 * counter — `times_redeemed + 1 where … times_redeemed < max_redemptions`, so
 * parallel redemptions never pass maxRedemptions (the row lock serialises them
 * and each re-checks the count it sees; the table's check refuses it too).
 * A refusal names its reason (409 COUPON_NOT_APPLICABLE): expired, used up,
 * deleted, inactive, not for this plan, currency differs.
 */
export async function redeemDiscount(
  em: EntityManager,
  now: Date,
  merchantId: string,
  request: DiscountRequest,
  plan: { id: string; currency: string },
): Promise<Redeemed> {
  checkDiscountRequest(request, true);
  let code: PromotionCodeRow | null = null;
  if (request.promotionCode !== undefined) {
    const id = await promotionCodeIdByCode(em, merchantId, request.promotionCode);
    code = id ? await em.findOne(PromotionCode, { id }, { refresh: true }) : null;
    if (!code) throw promotionCodeNotFound(request.promotionCode);
  }
  const couponId = code?.couponId ?? request.couponId!;
  const coupon = isUuid(couponId) ? await em.findOne(Coupon, { id: couponId.toLowerCase(), merchantId }, { refresh: true }) : null;
  if (!coupon) throw couponNotFound(couponId);

  if (coupon.appliesToPlanIds && !coupon.appliesToPlanIds.includes(plan.id)) throw notApplicable("couponId: the coupon is not for this plan");
  if (coupon.amountOff != null && coupon.currency !== plan.currency) {
    throw notApplicable(`couponId: the coupon's currency differs (${coupon.currency}; the plan is priced in ${plan.currency})`);
  }
  if (code) {
    const taken = await redeemPromotionCode(em, code.id, now);
    if (taken === undefined) {
      const current = (await em.findOne(PromotionCode, { id: code.id }, { refresh: true }))!;
      if (!current.active) throw notApplicable("promotionCode: the promotion code is not active");
      if (current.expiresAt && current.expiresAt.getTime() <= now.getTime()) throw notApplicable("promotionCode: the promotion code expired");
      throw notApplicable("promotionCode: the promotion code is used up (maxRedemptions reached)");
    }
    code.timesRedeemed = taken;
  }
  const redeemed = await redeemCoupon(em, coupon.id, now);
  if (redeemed === undefined) {
    const current = (await em.findOne(Coupon, { id: coupon.id }, { refresh: true }))!;
    if (!current.valid) throw notApplicable("couponId: the coupon was deleted");
    if (current.redeemBy && current.redeemBy.getTime() <= now.getTime()) throw notApplicable("couponId: the coupon expired (redeemBy passed)");
    throw notApplicable("couponId: the coupon is used up (maxRedemptions reached)");
  }
  coupon.timesRedeemed = redeemed;
  return { coupon, promotionCode: code };
}

/** Writes a redeemed coupon's terms on the subscription (copied: its price then needs no join; coupons never change terms). */
export function setDiscount(sub: SubscriptionRow, redeemed: Redeemed, now: Date): void {
  const { coupon, promotionCode } = redeemed;
  sub.discountCouponId = coupon.id;
  sub.discountPromotionCodeId = promotionCode?.id ?? null;
  sub.discountPromotionCode = promotionCode?.code ?? null;
  sub.discountPercentOff = coupon.percentOff ?? null;
  sub.discountAmountOff = coupon.amountOff ?? null;
  sub.discountCurrency = coupon.amountOff != null ? (coupon.currency ?? null) : null;
  sub.discountStart = now;
  sub.discountPeriodsRemaining = coupon.duration === "ONCE" ? 1 : coupon.duration === "REPEATING" ? coupon.durationInPeriods! : null;
}

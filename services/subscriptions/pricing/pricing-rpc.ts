import type { ServiceImpl } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { PricingService } from "../../../proto/gen/billing/subscriptions/v1/pricing_pb.ts";
import { contextFor, type ServiceDeps } from "../../platform/service-deps.ts";
import { parseMetadataJson } from "../../platform/metadata.ts";
import { withRecordJson } from "../../platform/rpc/record-json.ts";
import { subscriptionPorts, type SubscriptionPorts } from "../ports.ts";
import { chargeRecord, subscriptionRecord } from "../subscription-record.ts";
import { chargeMessage, subscriptionMessage } from "../subscription-messages.ts";
import type { CouponRow, PromotionCodeRow } from "./pricing-entities.ts";
import { couponRecord, promotionCodeRecord } from "./coupon-record.ts";
import { createCoupon, deleteCoupon, getCoupon, listCoupons } from "./coupons.ts";
import { createPromotionCode, getPromotionCode, listPromotionCodes } from "./promotion-codes.ts";
import { applyDiscount, removeDiscount, type DiscountedSubscription } from "./apply-discount.ts";
import { getCharge, getReceipt, setReceiptPrefix } from "./receipts.ts";
import { invalid } from "../../platform/errors.ts";

const couponMessage = (c: CouponRow) => withRecordJson({ id: c.id, merchantId: c.merchantId, valid: c.valid }, couponRecord(c));
const codeMessage = (p: PromotionCodeRow) => withRecordJson({ id: p.id, couponId: p.couponId, code: p.code }, promotionCodeRecord(p));
const discounted = (d: DiscountedSubscription) => ({
  subscription: subscriptionMessage(d.subscription.merchantId, subscriptionRecord(d.subscription, d.authorization)),
});

/** Served by the subscriptions service (services/routes.ts): prices and receipts live next to the charges they shape. */
export function pricingService(deps: ServiceDeps): ServiceImpl<typeof PricingService> {
  let cached: { config: ServiceDeps["config"]; ports: SubscriptionPorts } | undefined;
  const ports = () => {
    if (cached?.config !== deps.config) cached = { config: deps.config, ports: subscriptionPorts(deps) };
    return cached.ports;
  };
  return {
    async createCoupon(req) {
      const coupon = await createCoupon(contextFor(deps), {
        merchantId: req.merchantId,
        name: req.name,
        percentOff: req.percentOff,
        amountOff: req.amountOff,
        currency: req.currency,
        duration: req.duration,
        durationInPeriods: req.durationInPeriods,
        maxRedemptions: req.maxRedemptions,
        redeemBy: req.redeemBy ? timestampDate(req.redeemBy) : undefined,
        appliesToPlanIds: req.appliesToPlanIds?.ids,
        metadata: parseMetadataJson(req.metadataJson),
      });
      return { coupon: couponMessage(coupon) };
    },
    async getCoupon(req) {
      return { coupon: couponMessage(await getCoupon(contextFor(deps), req.merchantId, req.id)) };
    },
    async listCoupons(req) {
      const page = await listCoupons(contextFor(deps), { merchantId: req.merchantId, limit: req.limit, cursor: req.cursor });
      return { coupons: page.items.map(couponMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async deleteCoupon(req) {
      return { coupon: couponMessage(await deleteCoupon(contextFor(deps), req.merchantId, req.id)) };
    },
    async createPromotionCode(req) {
      const code = await createPromotionCode(contextFor(deps), {
        merchantId: req.merchantId,
        couponId: req.couponId,
        code: req.code,
        maxRedemptions: req.maxRedemptions,
        expiresAt: req.expiresAt ? timestampDate(req.expiresAt) : undefined,
        active: req.active,
      });
      return { promotionCode: codeMessage(code) };
    },
    async getPromotionCode(req) {
      return { promotionCode: codeMessage(await getPromotionCode(contextFor(deps), req.merchantId, req.id)) };
    },
    async listPromotionCodes(req) {
      const page = await listPromotionCodes(contextFor(deps), { merchantId: req.merchantId, couponId: req.couponId, limit: req.limit, cursor: req.cursor });
      return { promotionCodes: page.items.map(codeMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async applyDiscount(req) {
      return discounted(
        await applyDiscount(contextFor(deps), ports(), req.merchantId, req.subscriptionId, { couponId: req.couponId, promotionCode: req.promotionCode }),
      );
    },
    async removeDiscount(req) {
      return discounted(await removeDiscount(contextFor(deps), ports(), req.merchantId, req.subscriptionId));
    },
    async getCharge(req) {
      return { charge: chargeMessage(chargeRecord(await getCharge(contextFor(deps), req.merchantId, req.chargeId))) };
    },
    async getReceipt(req) {
      const ctx = contextFor(deps);
      let receipt;
      if (req.token !== undefined) receipt = await getReceipt(ctx, ports(), { token: req.token });
      else if (req.merchantId !== undefined && req.chargeId !== undefined)
        receipt = await getReceipt(ctx, ports(), { merchantId: req.merchantId, chargeId: req.chargeId });
      else throw invalid("INVALID_REQUEST", "token: either token, or merchant_id and charge_id, is required");
      return { receiptNumber: receipt.receiptNumber, recordJson: JSON.stringify(receipt) };
    },
    async setReceiptPrefix(req) {
      return { prefix: await setReceiptPrefix(contextFor(deps), req.merchantId, req.prefix) };
    },
  };
}

import type { ServiceImpl } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { PricingService } from "../../../proto/gen/billing/subscriptions/v1/pricing_pb.ts";
import type { ServiceDeps } from "../../platform/service-deps.ts";
import { useCaseContext } from "../../platform/rpc/use-case-context.ts";
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
    async createCoupon(req, call) {
      const coupon = await createCoupon(useCaseContext(call), {
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
    async getCoupon(req, call) {
      return { coupon: couponMessage(await getCoupon(useCaseContext(call), req.merchantId, req.id)) };
    },
    async listCoupons(req, call) {
      const page = await listCoupons(useCaseContext(call), { merchantId: req.merchantId, limit: req.limit, cursor: req.cursor });
      return { coupons: page.items.map(couponMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async deleteCoupon(req, call) {
      return { coupon: couponMessage(await deleteCoupon(useCaseContext(call), req.merchantId, req.id)) };
    },
    async createPromotionCode(req, call) {
      const code = await createPromotionCode(useCaseContext(call), {
        merchantId: req.merchantId,
        couponId: req.couponId,
        code: req.code,
        maxRedemptions: req.maxRedemptions,
        expiresAt: req.expiresAt ? timestampDate(req.expiresAt) : undefined,
        active: req.active,
      });
      return { promotionCode: codeMessage(code) };
    },
    async getPromotionCode(req, call) {
      return { promotionCode: codeMessage(await getPromotionCode(useCaseContext(call), req.merchantId, req.id)) };
    },
    async listPromotionCodes(req, call) {
      const page = await listPromotionCodes(useCaseContext(call), { merchantId: req.merchantId, couponId: req.couponId, limit: req.limit, cursor: req.cursor });
      return { promotionCodes: page.items.map(codeMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async applyDiscount(req, call) {
      return discounted(
        await applyDiscount(useCaseContext(call), ports(), req.merchantId, req.subscriptionId, { couponId: req.couponId, promotionCode: req.promotionCode }),
      );
    },
    async removeDiscount(req, call) {
      return discounted(await removeDiscount(useCaseContext(call), ports(), req.merchantId, req.subscriptionId));
    },
    async getCharge(req, call) {
      return { charge: chargeMessage(chargeRecord(await getCharge(useCaseContext(call), req.merchantId, req.chargeId))) };
    },
    async getReceipt(req, call) {
      const ctx = useCaseContext(call);
      let receipt;
      if (req.token !== undefined) receipt = await getReceipt(ctx, ports(), { token: req.token });
      else if (req.merchantId !== undefined && req.chargeId !== undefined)
        receipt = await getReceipt(ctx, ports(), { merchantId: req.merchantId, chargeId: req.chargeId });
      else throw invalid("INVALID_REQUEST", "token: either token, or merchant_id and charge_id, is required");
      return { receiptNumber: receipt.receiptNumber, recordJson: JSON.stringify(receipt) };
    },
    async setReceiptPrefix(req, call) {
      return { prefix: await setReceiptPrefix(useCaseContext(call), req.merchantId, req.prefix) };
    },
  };
}

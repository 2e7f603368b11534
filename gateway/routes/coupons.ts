import { defineRoutes } from "../route.ts";
import { HttpError } from "../http-errors.ts";
import { pageSchema, toPageBody } from "../schemas/common.ts";
import {
  couponSchema,
  createCouponBody,
  createPromotionCodeBody,
  discountBody,
  listCouponsQuery,
  listPromotionCodesQuery,
  promotionCodeSchema,
} from "../schemas/coupons.ts";
import { subscriptionSchema } from "../schemas/subscriptions.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";
import { toTimestamp } from "../../services/platform/timestamps.ts";

/** One of couponId and promotionCode, not both (the service checks it again for gRPC callers). */
function checkOneDiscount(body: { couponId?: string; promotionCode?: string }): void {
  const both = body.couponId !== undefined && body.promotionCode !== undefined;
  const none = body.couponId === undefined && body.promotionCode === undefined;
  if (both || none) {
    const message = both ? "couponId: send couponId or promotionCode, not both" : "couponId: one of couponId or promotionCode is required";
    throw new HttpError(400, "INVALID_REQUEST", message, [{ field: "couponId", rule: "oneOf", message }]);
  }
}

export const couponRoutes = defineRoutes([
  {
    method: "post",
    path: "/api/v1/coupons",
    operationId: "createCoupon",
    summary: "Create a coupon",
    description:
      "Event `coupon.created`. Applied to a subscription at create (`couponId` or a promotion code) or later (`POST /api/v1/subscriptions/{id}/discount`).",
    tag: "Coupons",
    auth: "apiKey",
    body: createCouponBody,
    responses: { 201: { description: "The coupon", schema: couponSchema } },
    async handler({ body, merchantId }, { clients }) {
      const res = await clients.pricing.createCoupon({
        merchantId,
        name: body.name,
        percentOff: body.percentOff,
        amountOff: body.amountOff,
        currency: body.currency,
        duration: body.duration,
        durationInPeriods: body.durationInPeriods,
        maxRedemptions: body.maxRedemptions,
        redeemBy: body.redeemBy === undefined ? undefined : toTimestamp(body.redeemBy),
        appliesToPlanIds: body.appliesToPlanIds === undefined ? undefined : { ids: body.appliesToPlanIds },
        metadataJson: JSON.stringify(body.metadata ?? {}),
      });
      return { status: 201, body: recordOf(res.coupon) };
    },
  },
  {
    method: "get",
    path: "/api/v1/coupons",
    operationId: "listCoupons",
    summary: "List coupons, newest first",
    tag: "Coupons",
    auth: "apiKey",
    query: listCouponsQuery,
    responses: { 200: { description: "A page of coupons", schema: pageSchema(couponSchema) } },
    async handler({ query, merchantId }, { clients }) {
      const res = await clients.pricing.listCoupons({ merchantId, limit: query.limit, cursor: query.cursor });
      return { status: 200, body: toPageBody(res, res.coupons.map(recordOf)) };
    },
  },
  {
    method: "get",
    path: "/api/v1/coupons/:id",
    operationId: "getCoupon",
    summary: "Read a coupon",
    tag: "Coupons",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The coupon (404 COUPON_NOT_FOUND)", schema: couponSchema } },
    async handler({ params, merchantId }, { clients }) {
      return { status: 200, body: recordOf((await clients.pricing.getCoupon({ merchantId, id: params.id! })).coupon) };
    },
  },
  {
    method: "delete",
    path: "/api/v1/coupons/:id",
    operationId: "deleteCoupon",
    summary: "Delete a coupon: no new redemptions",
    description: "Answers the coupon with `valid: false`. Discounts already applied run their course; its promotion codes stop working.",
    tag: "Coupons",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The coupon, `valid: false`", schema: couponSchema } },
    async handler({ params, merchantId }, { clients }) {
      return { status: 200, body: recordOf((await clients.pricing.deleteCoupon({ merchantId, id: params.id! })).coupon) };
    },
  },
  {
    method: "post",
    path: "/api/v1/promotion-codes",
    operationId: "createPromotionCode",
    summary: "Create a promotion code for a coupon",
    tag: "Coupons",
    auth: "apiKey",
    body: createPromotionCodeBody,
    errors: [404, 409],
    responses: {
      201: {
        description: "The promotion code (404 COUPON_NOT_FOUND; 409 PROMOTION_CODE_EXISTS, COUPON_NOT_APPLICABLE for a deleted coupon)",
        schema: promotionCodeSchema,
      },
    },
    async handler({ body, merchantId }, { clients }) {
      const res = await clients.pricing.createPromotionCode({
        merchantId,
        couponId: body.couponId,
        code: body.code,
        maxRedemptions: body.maxRedemptions,
        expiresAt: body.expiresAt === undefined ? undefined : toTimestamp(body.expiresAt),
        active: body.active,
      });
      return { status: 201, body: recordOf(res.promotionCode) };
    },
  },
  {
    method: "get",
    path: "/api/v1/promotion-codes",
    operationId: "listPromotionCodes",
    summary: "List promotion codes, newest first",
    tag: "Coupons",
    auth: "apiKey",
    query: listPromotionCodesQuery,
    responses: { 200: { description: "A page of promotion codes", schema: pageSchema(promotionCodeSchema) } },
    async handler({ query, merchantId }, { clients }) {
      const res = await clients.pricing.listPromotionCodes({ merchantId, limit: query.limit, cursor: query.cursor, couponId: query.couponId });
      return { status: 200, body: toPageBody(res, res.promotionCodes.map(recordOf)) };
    },
  },
  {
    method: "get",
    path: "/api/v1/promotion-codes/:id",
    operationId: "getPromotionCode",
    summary: "Read a promotion code",
    tag: "Coupons",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The promotion code (404 PROMOTION_CODE_NOT_FOUND)", schema: promotionCodeSchema } },
    async handler({ params, merchantId }, { clients }) {
      return { status: 200, body: recordOf((await clients.pricing.getPromotionCode({ merchantId, id: params.id! })).promotionCode) };
    },
  },
  {
    method: "post",
    path: "/api/v1/subscriptions/:id/discount",
    operationId: "applySubscriptionDiscount",
    summary: "Apply a coupon or promotion code to a subscription",
    description:
      "Replaces the subscription's discount (events `subscription.discount_ended` with reason REPLACED, then `subscription.discount_applied`). A charge in flight is settled first.",
    tag: "Subscriptions",
    auth: "apiKey",
    body: discountBody,
    errors: [404, 409],
    responses: {
      200: {
        description:
          "The subscription with its `discount` (404 SUBSCRIPTION_NOT_FOUND, COUPON_NOT_FOUND, PROMOTION_CODE_NOT_FOUND; 409 COUPON_NOT_APPLICABLE with the reason, SUBSCRIPTION_NOT_CHANGEABLE, PAYMENT_IN_PROGRESS)",
        schema: subscriptionSchema,
      },
    },
    async handler({ body, params, merchantId }, { clients }) {
      checkOneDiscount(body);
      const res = await clients.pricing.applyDiscount({ merchantId, subscriptionId: params.id!, couponId: body.couponId, promotionCode: body.promotionCode });
      return { status: 200, body: recordOf(res.subscription) };
    },
  },
  {
    method: "delete",
    path: "/api/v1/subscriptions/:id/discount",
    operationId: "removeSubscriptionDiscount",
    summary: "End a subscription's discount",
    description: "Event `subscription.discount_ended` (reason REMOVED); without a discount the subscription is answered unchanged.",
    tag: "Subscriptions",
    auth: "apiKey",
    errors: [404, 409],
    responses: { 200: { description: "The subscription, `discount: null`", schema: subscriptionSchema } },
    async handler({ params, merchantId }, { clients }) {
      return { status: 200, body: recordOf((await clients.pricing.removeDiscount({ merchantId, subscriptionId: params.id! })).subscription) };
    },
  },
]);

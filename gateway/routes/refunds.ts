import { defineRoutes } from "../route.ts";
import { IDEMPOTENCY_HEADER } from "../idempotency.ts";
import { pageSchema, toPageBody } from "../schemas/common.ts";
import { createRefundBody, listRefundsQuery, refundSchema } from "../schemas/refunds.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";

export const refundRoutes = defineRoutes([
  {
    method: "post",
    path: "/api/v1/refunds",
    operationId: "createRefund",
    summary: "Refund a subscription charge, fully or in part",
    description:
      "Moves money from your balance back to the wallet account that paid, in the asset that was charged. " +
      "A full refund returns exactly the charge's `assetAmount`; a partial one converts `amount` at the charge's `rate`, rounded down to the asset's decimals, " +
      "and the refund that completes the charge returns exactly what remains, so the refunds add up to the asset amount charged. " +
      "The subscription's status and dates do not change. " +
      "404 CHARGE_NOT_FOUND; 409 CHARGE_NOT_REFUNDABLE (the charge is not SUCCEEDED), REFUND_EXCEEDS_CHARGE (more than remains; the message says what remains), " +
      "MERCHANT_BALANCE_INSUFFICIENT (your balance in that asset is too low: nothing moved), REFUND_IN_PROGRESS (a retry while the first attempt still runs).",
    tag: "Refunds",
    auth: "apiKey",
    body: createRefundBody,
    idempotent: true,
    errors: [404, 409],
    responses: { 201: { description: "The refund, SUCCEEDED", schema: refundSchema } },
    async handler({ body, merchantId }, { clients }, ctx) {
      const key = ctx.get(IDEMPOTENCY_HEADER);
      const res = await clients.refunds.createRefund({
        merchantId,
        chargeId: body.chargeId,
        amount: body.amount,
        reason: body.reason,
        metadataJson: JSON.stringify(body.metadata ?? {}),
        idempotencyKey: key || undefined,
      });
      return { status: 201, body: recordOf(res.refund) };
    },
  },
  {
    method: "get",
    path: "/api/v1/refunds",
    operationId: "listRefunds",
    summary: "List refunds, newest first",
    tag: "Refunds",
    auth: "apiKey",
    query: listRefundsQuery,
    responses: { 200: { description: "A page of refunds", schema: pageSchema(refundSchema) } },
    async handler({ query, merchantId }, { clients }) {
      const res = await clients.refunds.listRefunds({
        merchantId,
        chargeId: query.chargeId,
        subscriptionId: query.subscriptionId,
        limit: query.limit,
        cursor: query.cursor,
      });
      return { status: 200, body: toPageBody(res, res.refunds.map(recordOf)) };
    },
  },
  {
    method: "get",
    path: "/api/v1/refunds/:id",
    operationId: "getRefund",
    summary: "Get a refund",
    tag: "Refunds",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The refund", schema: refundSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { refund } = await clients.refunds.getRefund({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(refund) };
    },
  },
]);

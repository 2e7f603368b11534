import { defineRoutes } from "../route.ts";
import { pageSchema, toPageBody } from "../schemas/common.ts";
import { createPaymentOrderBody, listPaymentOrdersQuery, paymentOrderSchema, paymentOrderStatusSchema } from "../schemas/payment-orders.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";

const TAG = "Payment orders";

export const paymentOrderRoutes = defineRoutes([
  {
    method: "post",
    path: "/api/v1/payment-orders",
    operationId: "createPaymentOrder",
    summary: "Create a one-time payment order: a fresh deposit address and the exact amount to pay",
    description:
      "201 with a new order. Retrying with the same externalId and the same body returns the existing order with 200 (whatever its status); " +
      "the same externalId with a different body is 409 PAYMENT_ORDER_ALREADY_EXISTS. An Idempotency-Key replays the first response instead. " +
      "An unknown asset is 400 naming the allowed values.",
    tag: TAG,
    auth: "apiKey",
    idempotent: true,
    body: createPaymentOrderBody,
    errors: [409, 503],
    responses: {
      201: { description: "The order, created", schema: paymentOrderSchema },
      200: { description: "The existing order with this externalId (a retry of the same request)", schema: paymentOrderSchema },
    },
    async handler({ body, merchantId }, { clients }) {
      const res = await clients.orders.createPaymentOrder({
        merchantId,
        externalId: body.externalId,
        externalCustomerId: body.externalCustomerId,
        asset: body.asset,
        amount: body.amount,
        currency: body.currency,
        expiresInMinutes: body.expiresInMinutes,
        metadataJson: JSON.stringify(body.metadata ?? {}),
        underpaymentTolerancePercent: body.underpaymentTolerancePercent,
      });
      return { status: res.created ? 201 : 200, body: recordOf(res.order) };
    },
  },
  {
    method: "get",
    path: "/api/v1/payment-orders",
    operationId: "listPaymentOrders",
    summary: "List payment orders, newest first",
    tag: TAG,
    auth: "apiKey",
    query: listPaymentOrdersQuery,
    responses: { 200: { description: "A page of orders", schema: pageSchema(paymentOrderSchema) } },
    async handler({ query, merchantId }, { clients }) {
      const res = await clients.orders.listPaymentOrders({
        merchantId,
        limit: query.limit,
        cursor: query.cursor,
        status: query.status,
        externalCustomerId: query.externalCustomerId,
      });
      return { status: 200, body: toPageBody(res, res.orders.map(recordOf)) };
    },
  },
  // Registered before /{id}/status so that an externalId spelled "status" still reads by external id.
  {
    method: "get",
    path: "/api/v1/payment-orders/by-external-id/:externalId",
    operationId: "getPaymentOrderByExternalId",
    summary: "Get a payment order by your externalId",
    tag: TAG,
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The order", schema: paymentOrderSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { order } = await clients.orders.getPaymentOrderByExternalId({ merchantId, externalId: params.externalId! });
      return { status: 200, body: recordOf(order) };
    },
  },
  {
    method: "get",
    path: "/api/v1/payment-orders/:id/status",
    operationId: "getPaymentOrderStatus",
    summary: "Get the status of a payment order (small body, cheap to poll)",
    tag: TAG,
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The order's status", schema: paymentOrderStatusSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { status } = await clients.orders.getPaymentOrderStatus({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(status) };
    },
  },
  {
    method: "get",
    path: "/api/v1/payment-orders/:id",
    operationId: "getPaymentOrder",
    summary: "Get a payment order",
    tag: TAG,
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The order", schema: paymentOrderSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { order } = await clients.orders.getPaymentOrder({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(order) };
    },
  },
]);

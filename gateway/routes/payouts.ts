import { defineRoutes } from "../route.ts";
import { IDEMPOTENCY_HEADER } from "../idempotency.ts";
import { pageSchema, toPageBody } from "../schemas/common.ts";
import {
  adminListPayoutsQuery,
  adminPayoutSchema,
  createDestinationBody,
  createPayoutBody,
  destinationSchema,
  listDestinationsQuery,
  listPayoutsQuery,
  payoutSchema,
  sandboxFailPayoutBody,
} from "../schemas/payouts.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";
import { createOrderRefundBody, listOrderRefundsQuery, orderRefundSchema } from "../schemas/order-refunds.ts";

const sandboxOnly = (config: { sandbox: boolean }) => config.sandbox;

export const payoutDestinationRoutes = defineRoutes([
  {
    method: "post",
    path: "/api/v1/payout-destinations",
    operationId: "createPayoutDestination",
    summary: "Register an address to pay out to",
    description:
      "The address is checked for the asset's network and the deployment's chain (400 INVALID_REQUEST naming `address` and the rule). " +
      "It can be paid out to only after the cooling period (`activatesAt`; PAYOUT_DESTINATION_COOLDOWN_MINUTES, default 1440) and payout_destination.created is sent at once, " +
      "so a leaked API key cannot drain your balance to a fresh address before you notice. 409 DESTINATION_EXISTS: the same asset and address is registered (not removed).",
    tag: "Payouts",
    auth: "apiKey",
    body: createDestinationBody,
    idempotent: true,
    errors: [409],
    responses: { 201: { description: "The destination, PENDING_ACTIVATION (ACTIVE at once with a cooling period of 0)", schema: destinationSchema } },
    async handler({ body, merchantId }, { clients }) {
      const res = await clients.payouts.createPayoutDestination({ merchantId, asset: body.asset, address: body.address, label: body.label });
      return { status: 201, body: recordOf(res.destination) };
    },
  },
  {
    method: "get",
    path: "/api/v1/payout-destinations",
    operationId: "listPayoutDestinations",
    summary: "List payout destinations, newest first",
    tag: "Payouts",
    auth: "apiKey",
    query: listDestinationsQuery,
    responses: { 200: { description: "A page of destinations", schema: pageSchema(destinationSchema) } },
    async handler({ query, merchantId }, { clients }) {
      const res = await clients.payouts.listPayoutDestinations({
        merchantId,
        status: query.status,
        asset: query.asset,
        limit: query.limit,
        cursor: query.cursor,
      });
      return { status: 200, body: toPageBody(res, res.destinations.map(recordOf)) };
    },
  },
  {
    method: "get",
    path: "/api/v1/payout-destinations/:id",
    operationId: "getPayoutDestination",
    summary: "Get a payout destination",
    description: "404 DESTINATION_NOT_FOUND (also for another merchant's).",
    tag: "Payouts",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The destination", schema: destinationSchema } },
    async handler({ params, merchantId }, { clients }) {
      const res = await clients.payouts.getPayoutDestination({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(res.destination) };
    },
  },
  {
    method: "delete",
    path: "/api/v1/payout-destinations/:id",
    operationId: "removePayoutDestination",
    summary: "Remove a payout destination",
    description: "It is kept for history with status REMOVED; payouts in flight to it continue. 404 DESTINATION_NOT_FOUND.",
    tag: "Payouts",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The destination, REMOVED", schema: destinationSchema } },
    async handler({ params, merchantId }, { clients }) {
      const res = await clients.payouts.removePayoutDestination({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(res.destination) };
    },
  },
]);

export const payoutRoutes = defineRoutes([
  {
    method: "post",
    path: "/api/v1/payouts",
    operationId: "createPayout",
    summary: "Pay out to one of your destinations",
    description:
      "amount + fee leave your available balance at once, in one ledger transaction (they show under `pending` in GET /api/v1/balance until PAID, or come back when it FAILS or is CANCELLED). " +
      "404 DESTINATION_NOT_FOUND; 409 DESTINATION_NOT_ACTIVE (cooling period, or removed), MERCHANT_BALANCE_INSUFFICIENT (amount + fee above your available balance: nothing moved), PAYOUT_IN_PROGRESS (a retry while the first attempt runs); " +
      "400 naming `amount` (zero, more decimals than the asset, below the asset's minimum: the message states it); 503 PAYOUTS_UNAVAILABLE (a live deployment without a custody signer).",
    tag: "Payouts",
    auth: "apiKey",
    body: createPayoutBody,
    idempotent: true,
    errors: [404, 409],
    responses: { 201: { description: "The payout, PENDING (IN_REVIEW above your review threshold)", schema: payoutSchema } },
    async handler({ body, merchantId }, { clients }, ctx) {
      const key = ctx.get(IDEMPOTENCY_HEADER);
      const res = await clients.payouts.createPayout({
        merchantId,
        destinationId: body.destinationId,
        amount: body.amount,
        metadataJson: JSON.stringify(body.metadata ?? {}),
        idempotencyKey: key || undefined,
      });
      return { status: 201, body: recordOf(res.payout) };
    },
  },
  {
    method: "get",
    path: "/api/v1/payouts",
    operationId: "listPayouts",
    summary: "List payouts, newest first",
    tag: "Payouts",
    auth: "apiKey",
    query: listPayoutsQuery,
    responses: { 200: { description: "A page of payouts", schema: pageSchema(payoutSchema) } },
    async handler({ query, merchantId }, { clients }) {
      const res = await clients.payouts.listPayouts({
        merchantId,
        status: query.status,
        destinationId: query.destinationId,
        asset: query.asset,
        limit: query.limit,
        cursor: query.cursor,
      });
      return { status: 200, body: toPageBody(res, res.payouts.map(recordOf)) };
    },
  },
  {
    method: "get",
    path: "/api/v1/payouts/:id",
    operationId: "getPayout",
    summary: "Get a payout",
    description: "404 PAYOUT_NOT_FOUND (also for another merchant's).",
    tag: "Payouts",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The payout", schema: payoutSchema } },
    async handler({ params, merchantId }, { clients }) {
      const res = await clients.payouts.getPayout({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(res.payout) };
    },
  },
  {
    method: "post",
    path: "/api/v1/payouts/:id/cancel",
    operationId: "cancelPayout",
    summary: "Cancel a PENDING payout; its amount + fee return to your balance",
    description: "409 INVALID_STATUS_TRANSITION for any other status, or once its hand-over to the chain has started. 404 PAYOUT_NOT_FOUND.",
    tag: "Payouts",
    auth: "apiKey",
    idempotent: true,
    errors: [404, 409],
    responses: { 200: { description: "The payout, CANCELLED", schema: payoutSchema } },
    async handler({ params, merchantId }, { clients }) {
      const res = await clients.payouts.cancelPayout({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(res.payout) };
    },
  },
]);

export const adminPayoutRoutes = defineRoutes([
  {
    method: "get",
    path: "/admin/v1/payouts",
    operationId: "adminListPayouts",
    summary: "Every merchant's payouts, newest first",
    tag: "Operator",
    auth: "admin",
    query: adminListPayoutsQuery,
    responses: { 200: { description: "A page of payouts", schema: pageSchema(adminPayoutSchema) } },
    async handler({ query }, { clients }) {
      const res = await clients.payouts.adminListPayouts({
        status: query.status,
        filterMerchantId: query.merchantId,
        limit: query.limit,
        cursor: query.cursor,
      });
      return { status: 200, body: toPageBody(res, res.payouts.map(recordOf)) };
    },
  },
  {
    method: "post",
    path: "/admin/v1/payouts/:id/approve",
    operationId: "adminApprovePayout",
    summary: "Approve a payout waiting IN_REVIEW: it is handed to the chain",
    description: "409 INVALID_STATUS_TRANSITION unless IN_REVIEW. 404 PAYOUT_NOT_FOUND.",
    tag: "Operator",
    auth: "admin",
    errors: [404, 409],
    responses: { 200: { description: "The payout (PROCESSING once the chain accepted it)", schema: adminPayoutSchema } },
    async handler({ params }, { clients }) {
      return { status: 200, body: recordOf((await clients.payouts.approvePayout({ id: params.id! })).payout) };
    },
  },
  {
    method: "post",
    path: "/admin/v1/payouts/:id/reject",
    operationId: "adminRejectPayout",
    summary: "Reject a payout waiting IN_REVIEW: FAILED with reason REJECTED, money back",
    description: "409 INVALID_STATUS_TRANSITION unless IN_REVIEW (and not yet approved). 404 PAYOUT_NOT_FOUND.",
    tag: "Operator",
    auth: "admin",
    errors: [404, 409],
    responses: { 200: { description: "The payout, FAILED", schema: adminPayoutSchema } },
    async handler({ params }, { clients }) {
      return { status: 200, body: recordOf((await clients.payouts.rejectPayout({ id: params.id! })).payout) };
    },
  },
  {
    method: "post",
    path: "/admin/v1/sandbox/payouts/:id/fail",
    operationId: "adminSandboxFailPayout",
    summary: "Fail a PROCESSING payout on the sandbox chain (sandbox mode only)",
    description: "The payout becomes FAILED with this reason and its amount + fee return to the balance. 409 INVALID_STATUS_TRANSITION unless PROCESSING.",
    tag: "Operator",
    auth: "admin",
    available: sandboxOnly,
    body: sandboxFailPayoutBody,
    errors: [404, 409],
    responses: { 200: { description: "The payout, FAILED", schema: adminPayoutSchema } },
    async handler({ params, body }, { clients }) {
      return { status: 200, body: recordOf((await clients.payouts.sandboxFailPayout({ id: params.id!, reason: body.reason })).payout) };
    },
  },
]);

export const orderRefundRoutes = defineRoutes([
  {
    method: "post",
    path: "/api/v1/payment-orders/:id/refunds",
    operationId: "createOrderRefund",
    summary: "Refund a payment order to the customer's address",
    description:
      "amount + the asset's payout fee are reserved from your available balance at once, in one ORDER_REFUND ledger transaction (under the lock refunds and payouts check the balance under). " +
      "With `address` the refund is paid out at once (no cooling period) as a payout with source ORDER_REFUND; without it the answer carries `claimUrl`, a page where the customer enters the address (valid `expiresInMinutes`; expired, the money returns). " +
      "404 PAYMENT_ORDER_NOT_FOUND (also another merchant's); 409 ORDER_NOT_REFUNDABLE (no confirmed payment), REFUND_EXCEEDS_PAYMENT (more than the confirmed payments minus refunds so far; the message says what remains), " +
      "MERCHANT_BALANCE_INSUFFICIENT (amount + fee above your available balance: nothing moved), PAYOUT_IN_PROGRESS (a retry while the first attempt runs); 400 naming `amount` or `address` and the rule; 503 PAYOUTS_UNAVAILABLE.",
    tag: "Payouts",
    auth: "apiKey",
    body: createOrderRefundBody,
    idempotent: true,
    errors: [404, 409],
    responses: { 201: { description: "The refund: PROCESSING (address given) or AWAITING_ADDRESS (claimUrl)", schema: orderRefundSchema } },
    async handler({ body, params, merchantId }, { clients }, ctx) {
      const key = ctx.get(IDEMPOTENCY_HEADER);
      const res = await clients.payouts.createOrderRefund({
        merchantId,
        paymentOrderId: params.id!,
        amount: body.amount,
        address: body.address,
        expiresInMinutes: body.expiresInMinutes ?? 0,
        idempotencyKey: key || undefined,
      });
      return { status: 201, body: recordOf(res.refund) };
    },
  },
  {
    method: "get",
    path: "/api/v1/payment-orders/:id/refunds",
    operationId: "listOrderRefunds",
    summary: "List a payment order's refunds, newest first",
    description: "404 PAYMENT_ORDER_NOT_FOUND (also another merchant's).",
    tag: "Payouts",
    auth: "apiKey",
    query: listOrderRefundsQuery,
    errors: [404],
    responses: { 200: { description: "A page of refunds", schema: pageSchema(orderRefundSchema) } },
    async handler({ params, query, merchantId }, { clients }) {
      const res = await clients.payouts.listOrderRefunds({ merchantId, paymentOrderId: params.id!, limit: query.limit, cursor: query.cursor });
      return { status: 200, body: toPageBody(res, res.refunds.map(recordOf)) };
    },
  },
]);

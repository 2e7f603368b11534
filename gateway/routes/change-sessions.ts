import { HttpError } from "../http-errors.ts";
import { defineRoutes } from "../route.ts";
import { pageSchema, toPageBody } from "../schemas/common.ts";
import { changeSessionSchema, createChangeSessionBody, createdChangeSessionSchema, listChangeSessionsQuery } from "../schemas/change-sessions.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";

export const changeSessionRoutes = defineRoutes([
  {
    method: "post",
    path: "/api/v1/subscriptions/:id/change-sessions",
    operationId: "createChangeSession",
    summary: "Propose a plan change the customer must approve",
    description:
      "Returns the change session with its single-use `approvalUrl`: the customer logs in to their wallet there, sees the current and the requested plan " +
      "and any immediate charge, and approves with their PIN (the subscription's funding asset pays). " +
      "409: SUBSCRIPTION_NOT_CHANGEABLE (not ACTIVE, TRIALING or PAUSED), SAME_PLAN, CURRENCY_NOT_PAYABLE (the funding asset cannot pay the plan's currency), " +
      "ASSET_AMOUNT_TOO_LARGE (the plan's amount or the immediate charge, converted to the funding asset, is more than a charge can hold: less than 10^20), " +
      "CHANGE_SESSION_ALREADY_OPEN (another session awaits approval).",
    tag: "Subscription changes",
    auth: "apiKey",
    body: createChangeSessionBody,
    idempotent: true,
    errors: [404, 409],
    responses: { 201: { description: "The change session, awaiting approval", schema: createdChangeSessionSchema } },
    async handler({ params, body, merchantId }, { clients }) {
      if (body.proration === "PRORATE" && body.effectiveMode === "IMMEDIATE" && body.immediateChargeAmount !== undefined) {
        const message = "immediateChargeAmount: must be absent with proration PRORATE and effectiveMode IMMEDIATE (it is computed when the change applies)";
        throw new HttpError(400, "INVALID_REQUEST", message, [{ field: "immediateChargeAmount", rule: "absent", message }]);
      }
      const res = await clients.subscriptions.createChangeSession({
        merchantId,
        subscriptionId: params.id!,
        requestedPlanId: body.requestedPlanId,
        effectiveMode: body.effectiveMode,
        immediateChargeAmount: body.immediateChargeAmount ?? "",
        proration: body.proration,
        successUrl: body.successUrl,
        cancelUrl: body.cancelUrl,
        reason: body.reason,
        metadataJson: JSON.stringify(body.metadata ?? {}),
      });
      return { status: 201, body: { ...recordOf(res.changeSession), approvalUrl: res.approvalUrl } };
    },
  },
  {
    method: "get",
    path: "/api/v1/subscriptions/:id/change-sessions",
    operationId: "listChangeSessions",
    summary: "List a subscription's change sessions, newest first",
    tag: "Subscription changes",
    auth: "apiKey",
    query: listChangeSessionsQuery,
    errors: [404],
    responses: { 200: { description: "A page of change sessions", schema: pageSchema(changeSessionSchema) } },
    async handler({ params, query, merchantId }, { clients }) {
      const res = await clients.subscriptions.listChangeSessions({
        merchantId,
        subscriptionId: params.id!,
        limit: query.limit,
        cursor: query.cursor,
        status: query.status,
      });
      return { status: 200, body: toPageBody(res, res.changeSessions.map(recordOf)) };
    },
  },
  {
    method: "get",
    path: "/api/v1/subscriptions/:id/change-sessions/:sessionId",
    operationId: "getChangeSession",
    summary: "Get a change session",
    tag: "Subscription changes",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The change session", schema: changeSessionSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { changeSession } = await clients.subscriptions.getChangeSession({ merchantId, subscriptionId: params.id!, id: params.sessionId! });
      return { status: 200, body: recordOf(changeSession) };
    },
  },
  {
    method: "post",
    path: "/api/v1/subscriptions/:id/change-sessions/:sessionId/cancel",
    operationId: "cancelChangeSession",
    summary: "Withdraw a change session awaiting approval or scheduled",
    description:
      "The session becomes CANCELLED (reason MERCHANT_CANCELLED) and its approval link stops working. " +
      "409 INVALID_STATUS_TRANSITION once it was applied, declined or expired; 409 PAYMENT_IN_PROGRESS while its immediate charge is being taken.",
    tag: "Subscription changes",
    auth: "apiKey",
    errors: [404, 409],
    responses: { 200: { description: "The cancelled change session", schema: changeSessionSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { changeSession } = await clients.subscriptions.cancelChangeSession({ merchantId, subscriptionId: params.id!, id: params.sessionId! });
      return { status: 200, body: recordOf(changeSession) };
    },
  },
]);

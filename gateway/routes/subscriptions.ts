import { isoFromTimestamp } from "../../services/platform/timestamps.ts";
import { defineRoutes, JsonText, type RouteSpec } from "../route.ts";
import { HttpError } from "../http-errors.ts";
import { IDEMPOTENCY_HEADER } from "../idempotency.ts";
import { pageSchema, toPageBody } from "../schemas/common.ts";
import { createdSubscriptionSchema, createSubscriptionBody, listSubscriptionsQuery, subscriptionSchema } from "../schemas/subscriptions.ts";
import { recordJsonOf, recordOf } from "../../services/platform/rpc/record-json.ts";

type Transition = "pause" | "resume" | "cancel";

const TRANSITION_DOCS: Record<Transition, { summary: string; description: string }> = {
  pause: { summary: "Pause a subscription", description: "ACTIVE or TRIALING → PAUSED. Nothing is charged while paused." },
  resume: { summary: "Resume a paused subscription", description: "PAUSED → the status it was paused from (ACTIVE or TRIALING)." },
  cancel: { summary: "Cancel a subscription", description: "Any non-terminal status → CANCELLED, at once; nothing is charged afterwards." },
};

function transitionRoute(action: Transition): RouteSpec {
  return {
    method: "post",
    path: `/api/v1/subscriptions/:id/${action}`,
    operationId: `${action}Subscription`,
    ...TRANSITION_DOCS[action],
    tag: "Subscriptions",
    auth: "apiKey",
    errors: [404, 409],
    responses: { 200: { description: "The updated subscription (409 INVALID_STATUS_TRANSITION names the current status)", schema: subscriptionSchema } },
    async handler({ params, merchantId }, { clients }) {
      const req = { merchantId, id: params.id! };
      const res =
        action === "pause"
          ? await clients.subscriptions.pauseSubscription(req)
          : action === "resume"
            ? await clients.subscriptions.resumeSubscription(req)
            : await clients.subscriptions.cancelSubscription(req);
      return { status: 200, body: recordOf(res.subscription) };
    },
  };
}

export const subscriptionRoutes = defineRoutes([
  {
    method: "post",
    path: "/api/v1/subscriptions",
    operationId: "createSubscription",
    summary: "Create a subscription awaiting the customer's approval",
    description:
      "Returns the single-use `authorizationUrl` to send the customer to. There they log in to their wallet, choose the funding asset and confirm with their PIN.",
    tag: "Subscriptions",
    auth: "apiKey",
    body: createSubscriptionBody,
    idempotent: true,
    errors: [404, 409],
    responses: { 201: { description: "The authorization result", schema: createdSubscriptionSchema } },
    async handler({ body, merchantId }, { clients }, ctx) {
      if (body.walletUserId === undefined && body.customerEmail === undefined) {
        throw new HttpError(400, "INVALID_REQUEST", "walletUserId: at least one of walletUserId or customerEmail is required", [
          { field: "walletUserId", rule: "anyOf", message: "walletUserId: at least one of walletUserId or customerEmail is required" },
        ]);
      }
      if (body.couponId !== undefined && body.promotionCode !== undefined) {
        const message = "couponId: send couponId or promotionCode, not both";
        throw new HttpError(400, "INVALID_REQUEST", message, [{ field: "couponId", rule: "oneOf", message }]);
      }
      const res = await clients.subscriptions.createSubscription({
        merchantId,
        externalReference: body.externalReference,
        serviceReference: body.serviceReference,
        planId: body.planId,
        walletUserId: body.walletUserId,
        customerEmail: body.customerEmail,
        successUrl: body.successUrl,
        cancelUrl: body.cancelUrl,
        authorizationExpiresInMinutes: body.authorizationExpiresInMinutes,
        metadataJson: JSON.stringify(body.metadata ?? {}),
        couponId: body.couponId,
        promotionCode: body.promotionCode,
        // Kept with the subscription: only a retry under it answers the subscription again (docs/merchant-api.md).
        idempotencyKey: ctx.get(IDEMPOTENCY_HEADER) || undefined,
      });
      return {
        status: 201,
        body: {
          subscriptionId: res.subscription!.id,
          status: res.subscription!.status,
          authorizationUrl: res.authorizationUrl,
          authorizationExpiresAt: isoFromTimestamp(res.authorizationExpiresAt!),
        },
      };
    },
  },
  {
    method: "get",
    path: "/api/v1/subscriptions",
    operationId: "listSubscriptions",
    summary: "List subscriptions, newest first",
    tag: "Subscriptions",
    auth: "apiKey",
    query: listSubscriptionsQuery,
    responses: { 200: { description: "A page of subscriptions", schema: pageSchema(subscriptionSchema) } },
    async handler({ query, merchantId }, { clients }) {
      const res = await clients.subscriptions.listSubscriptions({
        merchantId,
        limit: query.limit,
        cursor: query.cursor,
        status: query.status,
        planId: query.planId,
        walletUserId: query.walletUserId,
        externalReference: query.externalReference,
      });
      return { status: 200, body: toPageBody(res, res.subscriptions.map(recordOf)) };
    },
  },
  {
    method: "get",
    path: "/api/v1/subscriptions/:id",
    operationId: "getSubscription",
    summary: "Get a subscription with its current authorization and funding asset",
    tag: "Subscriptions",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The subscription", schema: subscriptionSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { subscription } = await clients.subscriptions.getSubscription({ merchantId, id: params.id! });
      // The hot read: the record's JSON goes out as the service wrote it (no parse and re-serialize).
      return { status: 200, body: new JsonText(recordJsonOf(subscription)) };
    },
  },
  transitionRoute("pause"),
  transitionRoute("resume"),
  transitionRoute("cancel"),
]);

import { defineRoutes } from "../route.ts";
import { pageSchema, toPageBody } from "../schemas/common.ts";
import { chargeSchema, listChargesQuery } from "../schemas/subscription-charges.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";

export const subscriptionChargeRoutes = defineRoutes([
  {
    method: "get",
    path: "/api/v1/subscriptions/:id/charges",
    operationId: "listSubscriptionCharges",
    summary: "List a subscription's charges, newest first",
    description:
      "Every charge attempt: the first payment, each renewal and each retry (a failed attempt is its own record with its `failureReason`), and plan changes' immediate charges. Filter with `status`.",
    tag: "Subscriptions",
    auth: "apiKey",
    query: listChargesQuery,
    errors: [404],
    responses: { 200: { description: "A page of charges", schema: pageSchema(chargeSchema) } },
    async handler({ params, query, merchantId }, { clients }) {
      const res = await clients.subscriptions.listSubscriptionCharges({
        merchantId,
        subscriptionId: params.id!,
        limit: query.limit,
        cursor: query.cursor,
        status: query.status,
      });
      return { status: 200, body: toPageBody(res, res.charges.map(recordOf)) };
    },
  },
]);

import { defineRoutes } from "../route.ts";
import { createPlanBody, listPlansQuery, planSchema, updatePlanBody } from "../schemas/plans.ts";
import { pageSchema, toPageBody } from "../schemas/common.ts";
import { IntervalSchema } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { enumValue } from "../../services/platform/rpc/proto-enums.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";

export const planRoutes = defineRoutes([
  {
    method: "post",
    path: "/api/v1/subscription-plans",
    operationId: "createSubscriptionPlan",
    summary: "Create a recurring plan",
    tag: "Subscription plans",
    auth: "apiKey",
    body: createPlanBody,
    responses: { 201: { description: "The plan", schema: planSchema } },
    async handler({ body, merchantId }, { clients }) {
      const { plan } = await clients.catalog.createPlan({
        merchantId,
        externalReference: body.externalReference,
        name: body.name,
        description: body.description,
        amount: body.amount,
        currency: body.currency,
        interval: enumValue(IntervalSchema, body.interval),
        intervalCount: body.intervalCount,
        trialDays: body.trialDays,
        maximumChargeAmount: body.maximumChargeAmount,
        metadataJson: JSON.stringify(body.metadata ?? {}),
      });
      return { status: 201, body: recordOf(plan) };
    },
  },
  {
    method: "get",
    path: "/api/v1/subscription-plans",
    operationId: "listSubscriptionPlans",
    summary: "List plans, newest first",
    tag: "Subscription plans",
    auth: "apiKey",
    query: listPlansQuery,
    responses: { 200: { description: "A page of plans", schema: pageSchema(planSchema) } },
    async handler({ query, merchantId }, { clients }) {
      const res = await clients.catalog.listPlans({
        merchantId,
        limit: query.limit,
        cursor: query.cursor,
        externalReference: query.externalReference,
        currency: query.currency,
        interval: query.interval ? enumValue(IntervalSchema, query.interval) : undefined,
        status: query.status,
      });
      return { status: 200, body: toPageBody(res, res.plans.map(recordOf)) };
    },
  },
  {
    method: "get",
    path: "/api/v1/subscription-plans/:id",
    operationId: "getSubscriptionPlan",
    summary: "Get a plan",
    tag: "Subscription plans",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The plan", schema: planSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { plan } = await clients.catalog.getPlan({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(plan) };
    },
  },
  {
    method: "patch",
    path: "/api/v1/subscription-plans/:id",
    operationId: "updateSubscriptionPlan",
    summary: "Rename or re-describe a plan",
    description:
      "Changes `name`, `description`, `externalReference` and `metadata` (replaced whole). Price and cadence " +
      "(`amount`, `currency`, `interval`, `intervalCount`, `trialDays`, `maximumChargeAmount`) never change: sending one is a 400 " +
      "naming it; a price change is a new plan and a change session. Records `plan.updated`.",
    tag: "Subscription plans",
    auth: "apiKey",
    body: updatePlanBody,
    errors: [404],
    responses: { 200: { description: "The updated plan", schema: planSchema } },
    async handler({ params, body, merchantId }, { clients }) {
      const { plan } = await clients.catalog.updatePlan({
        merchantId,
        id: params.id!,
        name: body.name,
        description: body.description ?? undefined,
        clearDescription: body.description === null,
        externalReference: body.externalReference ?? undefined,
        clearExternalReference: body.externalReference === null,
        metadataJson: body.metadata === undefined ? undefined : JSON.stringify(body.metadata),
      });
      return { status: 200, body: recordOf(plan) };
    },
  },
  {
    method: "post",
    path: "/api/v1/subscription-plans/:id/archive",
    operationId: "archiveSubscriptionPlan",
    summary: "Archive a plan",
    description:
      "No new subscriptions or change sessions on it (409 `PLAN_ARCHIVED`); existing subscriptions keep renewing. " +
      "Idempotent: archiving an archived plan returns it unchanged. Records `plan.archived`.",
    tag: "Subscription plans",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The plan, ARCHIVED", schema: planSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { plan } = await clients.catalog.archivePlan({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(plan) };
    },
  },
  {
    method: "post",
    path: "/api/v1/subscription-plans/:id/unarchive",
    operationId: "unarchiveSubscriptionPlan",
    summary: "Offer an archived plan again",
    description: "Idempotent: unarchiving an active plan returns it unchanged. Records `plan.unarchived`.",
    tag: "Subscription plans",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The plan, ACTIVE", schema: planSchema } },
    async handler({ params, merchantId }, { clients }) {
      const { plan } = await clients.catalog.unarchivePlan({ merchantId, id: params.id! });
      return { status: 200, body: recordOf(plan) };
    },
  },
]);

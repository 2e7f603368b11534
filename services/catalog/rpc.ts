import type { ServiceImpl } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CatalogService, Interval } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { contextFor, type ServiceDeps } from "../platform/service-deps.ts";
import { parseMetadataJson } from "../platform/metadata.ts";
import { formatAmount } from "../platform/money.ts";
import type { PlanInterval, PlanRow } from "./entities.ts";
import { createPlan } from "./create-plan.ts";
import { getPlan } from "./get-plan.ts";
import { listPlans } from "./list-plans.ts";
import { updatePlan } from "./update-plan.ts";
import { setPlanArchived } from "./set-plan-archived.ts";

const INTERVAL_TO_PROTO: Record<PlanInterval, Interval> = {
  DAY: Interval.DAY,
  WEEK: Interval.WEEK,
  MONTH: Interval.MONTH,
  YEAR: Interval.YEAR,
};
const intervalFromProto = (i: Interval): string | undefined =>
  (Object.entries(INTERVAL_TO_PROTO).find(([, v]) => v === i)?.[0]);

export function planMessage(plan: PlanRow) {
  return {
    id: plan.id,
    merchantId: plan.merchantId,
    externalReference: plan.externalReference ?? undefined,
    name: plan.name,
    description: plan.description ?? undefined,
    amount: formatAmount(plan.amount),
    currency: plan.currency,
    interval: INTERVAL_TO_PROTO[plan.interval],
    intervalCount: plan.intervalCount,
    trialDays: plan.trialDays,
    maximumChargeAmount: plan.maximumChargeAmount == null ? undefined : formatAmount(plan.maximumChargeAmount),
    metadataJson: JSON.stringify(plan.metadata),
    status: plan.status,
    createdAt: timestampFromDate(plan.createdAt),
    updatedAt: timestampFromDate(plan.updatedAt),
    archivedAt: plan.archivedAt ? timestampFromDate(plan.archivedAt) : undefined,
  };
}

export function catalogService(deps: ServiceDeps): ServiceImpl<typeof CatalogService> {
  return {
    async createPlan(req) {
      const plan = await createPlan(contextFor(deps), {
        merchantId: req.merchantId,
        externalReference: req.externalReference,
        name: req.name,
        description: req.description,
        amount: req.amount,
        currency: req.currency,
        interval: intervalFromProto(req.interval) ?? "",
        intervalCount: req.intervalCount || 1,
        trialDays: req.trialDays,
        maximumChargeAmount: req.maximumChargeAmount,
        metadata: parseMetadataJson(req.metadataJson),
      });
      return { plan: planMessage(plan) };
    },
    async getPlan(req) {
      return { plan: planMessage(await getPlan(contextFor(deps), req.merchantId, req.id)) };
    },
    async listPlans(req) {
      const page = await listPlans(contextFor(deps), {
        merchantId: req.merchantId,
        limit: req.limit,
        cursor: req.cursor,
        externalReference: req.externalReference,
        currency: req.currency,
        interval: req.interval === Interval.UNSPECIFIED ? undefined : intervalFromProto(req.interval),
        status: req.status,
      });
      return { plans: page.items.map(planMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async updatePlan(req) {
      const plan = await updatePlan(contextFor(deps), {
        merchantId: req.merchantId,
        id: req.id,
        name: req.name,
        description: req.clearDescription ? null : req.description,
        externalReference: req.clearExternalReference ? null : req.externalReference,
        metadata: req.metadataJson === undefined ? undefined : parseMetadataJson(req.metadataJson),
      });
      return { plan: planMessage(plan) };
    },
    async archivePlan(req) {
      return { plan: planMessage(await setPlanArchived(contextFor(deps), req.merchantId, req.id, "archive")) };
    },
    async unarchivePlan(req) {
      return { plan: planMessage(await setPlanArchived(contextFor(deps), req.merchantId, req.id, "unarchive")) };
    },
  };
}

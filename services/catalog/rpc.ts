import type { ServiceImpl } from "@connectrpc/connect";
import { CatalogService, Interval } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { useCaseContext } from "../platform/rpc/use-case-context.ts";
import { parseMetadataJson } from "../platform/metadata.ts";
import { toTimestamp } from "../platform/timestamps.ts";
import { withRecordJson } from "../platform/rpc/record-json.ts";
import type { PlanInterval, PlanRow } from "./entities.ts";
import { planRecord } from "./plan-record.ts";
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
const intervalFromProto = (i: Interval): string | undefined => Object.entries(INTERVAL_TO_PROTO).find(([, v]) => v === i)?.[0];

/** The typed message is the record (plan-record.ts) field by field, and carries it whole for the gateway. */
export function planMessage(plan: PlanRow) {
  const r = planRecord(plan);
  return withRecordJson(
    {
      id: r.id,
      merchantId: plan.merchantId,
      externalReference: r.externalReference ?? undefined,
      name: r.name,
      description: r.description ?? undefined,
      amount: r.amount,
      currency: r.currency,
      interval: INTERVAL_TO_PROTO[r.interval],
      intervalCount: r.intervalCount,
      trialDays: r.trialDays,
      maximumChargeAmount: r.maximumChargeAmount ?? undefined,
      metadataJson: JSON.stringify(r.metadata),
      status: r.status,
      createdAt: toTimestamp(r.createdAt),
      updatedAt: toTimestamp(r.updatedAt),
      archivedAt: r.archivedAt ? toTimestamp(r.archivedAt) : undefined,
    },
    r,
  );
}

export function catalogService(): ServiceImpl<typeof CatalogService> {
  return {
    async createPlan(req, call) {
      const plan = await createPlan(useCaseContext(call), {
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
    async getPlan(req, call) {
      return { plan: planMessage(await getPlan(useCaseContext(call), req.merchantId, req.id)) };
    },
    async listPlans(req, call) {
      const page = await listPlans(useCaseContext(call), {
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
    async updatePlan(req, call) {
      const plan = await updatePlan(useCaseContext(call), {
        merchantId: req.merchantId,
        id: req.id,
        name: req.name,
        description: req.clearDescription ? null : req.description,
        externalReference: req.clearExternalReference ? null : req.externalReference,
        metadata: req.metadataJson === undefined ? undefined : parseMetadataJson(req.metadataJson),
      });
      return { plan: planMessage(plan) };
    },
    async archivePlan(req, call) {
      return { plan: planMessage(await setPlanArchived(useCaseContext(call), req.merchantId, req.id, "archive")) };
    },
    async unarchivePlan(req, call) {
      return { plan: planMessage(await setPlanArchived(useCaseContext(call), req.merchantId, req.id, "unarchive")) };
    },
  };
}

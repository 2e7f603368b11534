import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Interval, type Plan } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";

const INTERVAL_NAMES: Record<Interval, string> = {
  [Interval.UNSPECIFIED]: "UNSPECIFIED",
  [Interval.DAY]: "DAY",
  [Interval.WEEK]: "WEEK",
  [Interval.MONTH]: "MONTH",
  [Interval.YEAR]: "YEAR",
};

export const intervalToProto = (name: string): Interval =>
  (Number(Object.entries(INTERVAL_NAMES).find(([, v]) => v === name)?.[0] ?? 0) as Interval);

/** The REST plan record; the same shape as the catalog's event data (planRecord). */
export function planBody(plan: Plan) {
  return {
    id: plan.id,
    object: "plan",
    externalReference: plan.externalReference ?? null,
    name: plan.name,
    description: plan.description ?? null,
    amount: plan.amount,
    currency: plan.currency,
    interval: INTERVAL_NAMES[plan.interval],
    intervalCount: plan.intervalCount,
    trialDays: plan.trialDays,
    maximumChargeAmount: plan.maximumChargeAmount ?? null,
    metadata: JSON.parse(plan.metadataJson || "{}") as Record<string, unknown>,
    status: plan.status,
    archivedAt: plan.archivedAt ? timestampDate(plan.archivedAt).toISOString() : null,
    createdAt: plan.createdAt ? timestampDate(plan.createdAt).toISOString() : null,
    updatedAt: plan.updatedAt ? timestampDate(plan.updatedAt).toISOString() : null,
  };
}

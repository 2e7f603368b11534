import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { PLAN_INTERVALS, type PlanInterval, type PlanStatus } from "./contract.ts";

export { PLAN_INTERVALS, type PlanInterval };

export const Plan = defineEntity({
  name: "Plan",
  tableName: "plans",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    externalReference: p.string().length(200).nullable(),
    name: p.string().length(200),
    description: p.text().nullable(),
    amount: p.decimal("string").precision(38).scale(18),
    currency: p.string().length(16),
    interval: p.string().length(8).$type<PlanInterval>(),
    intervalCount: p.integer(),
    trialDays: p.integer(),
    maximumChargeAmount: p.decimal("string").precision(38).scale(18).nullable(),
    metadata: p.json<Record<string, unknown>>(),
    status: p.string().length(16).$type<PlanStatus>(),
    archivedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type PlanRow = InferEntity<typeof Plan>;

import { formatAmount } from "../platform/money.ts";
import { iso } from "../platform/timestamps.ts";
import type { PlanRow } from "./entities.ts";

/**
 * The merchant-facing plan record: the REST body (carried as the message's
 * record_json) and event data. Amounts are in canonical form: numeric(38,18)
 * pads them, this strips that again.
 */
export function planRecord(plan: PlanRow) {
  return {
    id: plan.id,
    object: "plan",
    externalReference: plan.externalReference ?? null,
    name: plan.name,
    description: plan.description ?? null,
    amount: formatAmount(plan.amount),
    currency: plan.currency,
    interval: plan.interval,
    intervalCount: plan.intervalCount,
    trialDays: plan.trialDays,
    maximumChargeAmount: plan.maximumChargeAmount == null ? null : formatAmount(plan.maximumChargeAmount),
    metadata: plan.metadata,
    status: plan.status,
    archivedAt: plan.archivedAt ? iso(plan.archivedAt) : null,
    createdAt: iso(plan.createdAt),
    updatedAt: iso(plan.updatedAt),
  };
}

import type { UseCaseContext } from "../platform/use-case.ts";
import { recordEvent } from "../events/record-event.ts";
import { lockPlan } from "./plan-store.ts";
import { planRecord } from "./plan-record.ts";
import { checkDescription, checkExternalReference, checkPlanName } from "./plan-fields.ts";
import type { PlanRow } from "./entities.ts";

/** Only the descriptive fields; `null` clears description / externalReference; metadata is replaced whole. */
interface UpdatePlanInput {
  merchantId: string;
  id: string;
  name?: string | undefined;
  description?: string | null | undefined;
  externalReference?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/**
 * Renames or re-describes a plan. Price and cadence are not inputs at all:
 * they never change (a new plan and a change session do that), so nothing
 * that cached them can be wrong. One event, `plan.updated`, with the record.
 */
export async function updatePlan(ctx: UseCaseContext, input: UpdatePlanInput): Promise<PlanRow> {
  const name = input.name === undefined ? undefined : checkPlanName(input.name);
  checkExternalReference(input.externalReference);
  checkDescription(input.description);
  return ctx.em.transactional(async (em) => {
    const plan = await lockPlan(em, input.merchantId, input.id);
    if (name !== undefined) plan.name = name;
    if (input.description !== undefined) plan.description = input.description;
    if (input.externalReference !== undefined) plan.externalReference = input.externalReference;
    if (input.metadata !== undefined) plan.metadata = input.metadata;
    plan.updatedAt = ctx.clock.now();
    recordEvent(em, ctx.clock, { merchantId: plan.merchantId, type: "plan.updated", data: planRecord(plan) });
    return plan;
  });
}

import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { Plan, type PlanRow } from "./entities.ts";

/** Another merchant's plan is indistinguishable from a missing one. */
export async function getPlan(ctx: UseCaseContext, merchantId: string, id: string): Promise<PlanRow> {
  const plan = isUuid(id) ? await ctx.em.findOne(Plan, { id, merchantId }) : null;
  if (!plan) throw notFound("PLAN_NOT_FOUND", `plan ${id} not found`);
  return plan;
}

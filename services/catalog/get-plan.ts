import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import type { PlanRow } from "./entities.ts";
import { findMerchantPlan } from "./plan-store.ts";

/**
 * Another merchant's plan is indistinguishable from a missing one. The read is
 * on a hot path, batched per event-loop turn (findMerchantPlan).
 */
export async function getPlan(ctx: UseCaseContext, merchantId: string, id: string): Promise<PlanRow> {
  const plan = isUuid(id) ? await findMerchantPlan(ctx.em, merchantId, id) : undefined;
  if (!plan) throw notFound("PLAN_NOT_FOUND", `plan ${id} not found`);
  return plan;
}

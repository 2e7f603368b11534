import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { selectColumns } from "../platform/database/prepared.ts";
import { readBatched, readByIds } from "../platform/database/batched-reads.ts";
import { Plan, type PlanRow } from "./entities.ts";

const plansById = readByIds<PlanRow>(
  "catalog.get_plan",
  (em) => `select ${selectColumns(em, Plan, "p")} from plans p where p.id = any($1::uuid[]) and p.merchant_id = any($2::uuid[])`,
  "merchantId",
);

/**
 * Another merchant's plan is indistinguishable from a missing one. Every
 * subscription create and plan change reads the plan (its status is never
 * cached), so this read is on a hot path: the reads of one event-loop turn
 * share one prepared statement (readBatched).
 */
export async function getPlan(ctx: UseCaseContext, merchantId: string, id: string): Promise<PlanRow> {
  const plan = isUuid(id) ? await readBatched(ctx.em, plansById, { id, owner: merchantId }) : undefined;
  if (!plan) throw notFound("PLAN_NOT_FOUND", `plan ${id} not found`);
  return plan;
}

import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { readPrepared, selectColumns, statementFor } from "../platform/database/prepared.ts";
import { Plan, type PlanRow } from "./entities.ts";

/**
 * Another merchant's plan is indistinguishable from a missing one. A named
 * (prepared) statement: every subscription create and plan change reads the
 * plan (its status is never cached), so this read is on a hot path.
 */
export async function getPlan(ctx: UseCaseContext, merchantId: string, id: string): Promise<PlanRow> {
  const statement = statementFor(ctx.em, "catalog.get_plan", () => `select ${selectColumns(ctx.em, Plan, "p")} from plans p where p.id = $1 and p.merchant_id = $2`);
  const [plan] = isUuid(id) ? await readPrepared<PlanRow>(ctx.em, statement, [id, merchantId]) : [];
  if (!plan) throw notFound("PLAN_NOT_FOUND", `plan ${id} not found`);
  return plan;
}

import type { FilterQuery } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../platform/pagination.ts";
import { Plan, type PlanRow } from "./entities.ts";
import { PLAN_STATUSES } from "./contract.ts";
import { invalid } from "../platform/errors.ts";

interface ListPlansInput {
  merchantId: string;
  limit?: number | undefined;
  cursor?: string | undefined;
  externalReference?: string | undefined;
  currency?: string | undefined;
  interval?: string | undefined;
  status?: string | undefined;
}

export async function listPlans(ctx: UseCaseContext, input: ListPlansInput): Promise<Page<PlanRow>> {
  if (input.status !== undefined && !(PLAN_STATUSES as readonly string[]).includes(input.status)) {
    throw invalid("INVALID_REQUEST", `status: must be one of ${PLAN_STATUSES.join(", ")}`);
  }
  const limit = clampLimit(input.limit);
  const where: FilterQuery<PlanRow> = {
    merchantId: input.merchantId,
    ...(input.externalReference !== undefined && { externalReference: input.externalReference }),
    ...(input.currency !== undefined && { currency: input.currency }),
    ...(input.interval !== undefined && { interval: input.interval as PlanRow["interval"] }),
    ...(input.status !== undefined && { status: input.status as PlanRow["status"] }),
    ...afterCursor(input.cursor),
  } as FilterQuery<PlanRow>;
  const rows = await ctx.em.find(Plan, where, { orderBy: KEYSET_ORDER, limit: limit + 1 });
  return toPage(rows, limit);
}

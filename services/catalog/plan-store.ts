import { LockMode } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { Plan, type PlanRow } from "./entities.ts";

/** The merchant's plan locked until the transaction ends; another merchant's is not found. */
export async function lockPlan(em: EntityManager, merchantId: string, id: string): Promise<PlanRow> {
  const plan = isUuid(id) ? await em.findOne(Plan, { id, merchantId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true }) : null;
  if (!plan) throw notFound("PLAN_NOT_FOUND", `plan ${id} not found`);
  return plan;
}

import { LockMode } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
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
 * The merchant's plan (undefined for another merchant's or a missing one; `id`
 * must be a uuid). Every subscription create and plan change reads the plan
 * (its status is never cached), so this read is on a hot path: the reads of
 * one event-loop turn share one prepared statement (readBatched).
 */
export function findMerchantPlan(em: EntityManager, merchantId: string, id: string): Promise<PlanRow | undefined> {
  return readBatched(em, plansById, { id, owner: merchantId });
}

/** The merchant's plan locked until the transaction ends; another merchant's is not found. */
export async function lockPlan(em: EntityManager, merchantId: string, id: string): Promise<PlanRow> {
  const plan = isUuid(id) ? await em.findOne(Plan, { id, merchantId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true }) : null;
  if (!plan) throw notFound("PLAN_NOT_FOUND", `plan ${id} not found`);
  return plan;
}

import type { UseCaseContext } from "../platform/use-case.ts";
import { recordEvent } from "../events/record-event.ts";
import { lockPlan } from "./plan-store.ts";
import { planRecord } from "./plan-record.ts";
import { planMachine, type PlanEvent } from "./plan-status.ts";
import type { PlanRow } from "./entities.ts";

/**
 * Archive or unarchive (plan-status.ts). Idempotent: when the plan is already
 * there nothing is written and no event is recorded. Subscriptions already on
 * an archived plan keep renewing; only new subscriptions and change sessions
 * naming it are refused (PLAN_ARCHIVED, checked by the subscriptions service
 * on the plan it fetches for that request, never a cached one).
 */
export async function setPlanArchived(ctx: UseCaseContext, merchantId: string, id: string, event: PlanEvent): Promise<PlanRow> {
  return ctx.em.transactional(async (em) => {
    const plan = await lockPlan(em, merchantId, id);
    const to = planMachine.next(plan.status, event);
    if (to === plan.status) return plan;
    const now = ctx.clock.now();
    plan.status = to;
    plan.archivedAt = to === "ARCHIVED" ? now : null;
    plan.updatedAt = now;
    recordEvent(em, ctx.clock, { merchantId: plan.merchantId, type: event === "archive" ? "plan.archived" : "plan.unarchived", data: planRecord(plan) });
    return plan;
  });
}

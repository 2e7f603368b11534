import type { Router } from "@koa/router";
import type { Plan } from "../../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { isUuid } from "../../../services/platform/ids.ts";
import { redirect, type Ctx } from "../page-http.ts";
import type { DashboardFrame } from "../views.ts";
import { dashboardRoute, notFoundPage, refuse, type DashboardDeps, type Signed } from "./member-gate.ts";
import { fieldError, PLAN_NOTICES, PLANS_PATH, priceText, setArchived } from "./plans-page.ts";
import { refusalOf } from "./service-refusal.ts";
import { planStatusWords } from "./words.ts";

interface DashboardPlanModel {
  frame: DashboardFrame;
  id: string;
  action: string;
  price: string;
  status: string;
  statusText: string;
  archived: boolean;
  canManage: boolean;
  form: { name: string; description: string };
  error?: { field: string | undefined; message: string } | undefined;
  notice?: string | undefined;
}

declare module "../views.ts" {
  interface PageModels {
    "dashboard/plan": DashboardPlanModel;
  }
}

/**
 * One plan: its price (never changes: a new price is a new plan), and for
 * plans.manage its name and description (UpdatePlan) and archive/unarchive.
 */
export function planPage(router: Router, deps: DashboardDeps): void {
  const { catalog } = deps.clients;

  async function load(signed: Signed, id: string): Promise<Plan | undefined> {
    if (!isUuid(id)) return undefined;
    try {
      return (await catalog.getPlan({ merchantId: signed.member.merchantId, id })).plan;
    } catch (err) {
      if (refusalOf(err).status === 404) return undefined;
      throw err;
    }
  }

  function render(
    ctx: Ctx,
    signed: Signed,
    plan: Plan,
    screen: { status?: number; form?: DashboardPlanModel["form"]; error?: DashboardPlanModel["error"]; notice?: string } = {},
  ) {
    deps.pages.page(ctx, screen.status ?? 200, "dashboard/plan", {
      frame: signed.frame(`Plan ${plan.name}`, PLANS_PATH),
      id: plan.id,
      action: `${PLANS_PATH}/${plan.id}`,
      price: priceText(plan),
      status: plan.status,
      statusText: planStatusWords(plan.status),
      archived: plan.status === "ARCHIVED",
      canManage: signed.may("plans.manage"),
      form: screen.form ?? { name: plan.name, description: plan.description ?? "" },
      error: screen.error,
      notice: screen.notice,
    });
  }

  dashboardRoute(router, deps, `${PLANS_PATH}/:id`, {
    async get(ctx, signed) {
      const plan = await load(signed, ctx.params.id!);
      if (!plan) return notFoundPage(deps, ctx);
      const done = typeof ctx.query.done === "string" ? PLAN_NOTICES.get(ctx.query.done) : undefined;
      return render(ctx, signed, plan, done ? { notice: done } : {});
    },
    async post(ctx, signed, form) {
      const id = ctx.params.id!;
      const action = form.action ?? "";
      if (!["update-plan", "archive-plan", "unarchive-plan"].includes(action)) {
        const plan = await load(signed, id);
        if (!plan) return notFoundPage(deps, ctx);
        return render(ctx, signed, plan, { status: 400, error: { field: undefined, message: "Choose what to do." } });
      }
      if (!signed.may("plans.manage")) return refuse(deps, ctx, signed, PLANS_PATH);
      if (action !== "update-plan") return setArchived(deps, ctx, signed, { ...form, planId: id }, `${PLANS_PATH}/${id}`);
      const typed = { name: (form.name ?? "").slice(0, 4000), description: (form.description ?? "").slice(0, 4000) };
      if (!isUuid(id)) return notFoundPage(deps, ctx);
      try {
        await catalog.updatePlan({
          merchantId: signed.member.merchantId,
          id,
          name: typed.name,
          description: typed.description.trim() || undefined,
          clearDescription: typed.description.trim() === "",
        });
      } catch (err) {
        const refusal = refusalOf(err);
        if (refusal.status === 404) return notFoundPage(deps, ctx);
        const plan = await load(signed, id);
        if (!plan) return notFoundPage(deps, ctx);
        return render(ctx, signed, plan, { status: refusal.status, form: typed, error: fieldError(refusal) });
      }
      return redirect(ctx, `${PLANS_PATH}/${id}?done=updated`);
    },
  });
}

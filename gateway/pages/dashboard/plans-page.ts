import type { Router } from "@koa/router";
import { IntervalSchema, type Plan } from "../../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { CURRENCIES } from "../../../services/platform/currencies.ts";
import { isUuid } from "../../../services/platform/ids.ts";
import { enumName, enumValue } from "../../../services/platform/rpc/proto-enums.ts";
import { amountText, every } from "../page-text.ts";
import { redirect, type Ctx, type Form } from "../page-http.ts";
import type { DashboardFrame } from "../views.ts";
import { dashboardRoute, notFoundPage, refuse, type DashboardDeps, type Signed } from "./member-gate.ts";
import { DASHBOARD } from "./paths.ts";
import { refusalOf, type Refusal } from "./service-refusal.ts";
import { INTERVAL_TEXT, PLAN_STATUS_TEXT, planStatusWords } from "./words.ts";

export const PLANS_PATH = `${DASHBOARD}/plans`;
const PAGE_SIZE = 50;
const CURSOR = /^[A-Za-z0-9_-]{1,200}$/;

/** The create form's fields, named as the API's body (POST /api/v1/subscription-plans). */
const PLAN_FIELDS = ["name", "description", "amount", "currency", "interval", "intervalCount", "trialDays", "maximumChargeAmount"] as const;
type PlanFields = Record<(typeof PLAN_FIELDS)[number], string>;

export const PLAN_NOTICES = new Map([
  ["created", "The plan is created."],
  ["updated", "The plan is saved."],
  ["archived", "The plan is archived: no new subscriptions on it; existing ones keep renewing."],
  ["unarchived", "The plan is offered again."],
]);

interface DashboardPlansModel {
  frame: DashboardFrame;
  status: string;
  statuses: { value: string; label: string; selected: boolean }[];
  rows: { id: string; href: string; name: string; price: string; status: string; statusText: string; archived: boolean }[];
  nextHref?: string | undefined;
  canManage: boolean;
  form: PlanFields;
  currencies: { value: string; selected: boolean }[];
  intervals: { value: string; label: string; selected: boolean }[];
  /** A service refusal of the create form: the field it names gets the message beside it. */
  error?: { field: string | undefined; message: string } | undefined;
  notice?: string | undefined;
}

declare module "../views.ts" {
  interface PageModels {
    "dashboard/plans": DashboardPlansModel;
  }
}

const one = (value: unknown) => (typeof value === "string" ? value : "");
const EMPTY_FORM: PlanFields = {
  name: "",
  description: "",
  amount: "",
  currency: "USD",
  interval: "MONTH",
  intervalCount: "1",
  trialDays: "0",
  maximumChargeAmount: "",
};

export const priceText = (plan: Plan) =>
  `${amountText(plan.amount, plan.currency)} every ${every(enumName(IntervalSchema, plan.interval), plan.intervalCount)}`;

/** A whole number typed in a form, or -1 (which the service refuses naming the field) when it is not one. */
const wholeNumber = (text: string) => (/^\d{1,6}$/.test(text.trim()) ? Number(text.trim()) : -1);

/**
 * Plans: the list with a status filter; for plans.manage, the create form
 * (CreatePlan, the API's fields and checks) and archive/unarchive per row.
 * Editing a plan's name and description is on its own page (plan-page.ts).
 */
export function plansPage(router: Router, deps: DashboardDeps): void {
  const { catalog } = deps.clients;

  async function render(ctx: Ctx, signed: Signed, screen: { status?: number; form?: PlanFields; error?: DashboardPlansModel["error"]; notice?: string } = {}) {
    const status = PLAN_STATUS_TEXT.has(one(ctx.query.status)) ? one(ctx.query.status) : "";
    const cursor = CURSOR.test(one(ctx.query.cursor)) ? one(ctx.query.cursor) : undefined;
    const res = await catalog.listPlans({ merchantId: signed.member.merchantId, limit: PAGE_SIZE, cursor, status: status || undefined });
    const form = screen.form ?? EMPTY_FORM;
    deps.pages.page(ctx, screen.status ?? 200, "dashboard/plans", {
      frame: signed.frame("Plans", PLANS_PATH),
      status,
      statuses: [
        { value: "", label: "Any status", selected: status === "" },
        ...[...PLAN_STATUS_TEXT].map(([value, label]) => ({ value, label, selected: value === status })),
      ],
      rows: res.plans.map((p) => ({
        id: p.id,
        href: `${PLANS_PATH}/${p.id}`,
        name: p.name,
        price: priceText(p),
        status: p.status,
        statusText: planStatusWords(p.status),
        archived: p.status === "ARCHIVED",
      })),
      nextHref: res.hasMore && res.nextCursor ? `${PLANS_PATH}?${new URLSearchParams({ ...(status && { status }), cursor: res.nextCursor })}` : undefined,
      canManage: signed.may("plans.manage"),
      form,
      currencies: CURRENCIES.map((c) => ({ value: c, selected: c === form.currency })),
      intervals: [...INTERVAL_TEXT].map(([value, label]) => ({ value, label, selected: value === form.interval })),
      error: screen.error,
      notice: screen.notice,
    });
  }

  dashboardRoute(router, deps, PLANS_PATH, {
    async get(ctx, signed) {
      const done = PLAN_NOTICES.get(one(ctx.query.done));
      return render(ctx, signed, done ? { notice: done } : {});
    },
    async post(ctx, signed, form) {
      const action = form.action ?? "";
      if (!["create-plan", "archive-plan", "unarchive-plan"].includes(action))
        return render(ctx, signed, { status: 400, error: { field: undefined, message: "Choose what to do." } });
      if (!signed.may("plans.manage")) return refuse(deps, ctx, signed, PLANS_PATH);
      if (action !== "create-plan") return setArchived(deps, ctx, signed, form, PLANS_PATH);
      const typed = Object.fromEntries(PLAN_FIELDS.map((f) => [f, (form[f] ?? "").slice(0, 4000)])) as PlanFields;
      try {
        await catalog.createPlan({
          merchantId: signed.member.merchantId,
          name: typed.name,
          description: typed.description.trim() || undefined,
          amount: typed.amount.trim(),
          currency: typed.currency,
          interval: enumValue(IntervalSchema, typed.interval),
          intervalCount: wholeNumber(typed.intervalCount),
          trialDays: wholeNumber(typed.trialDays),
          maximumChargeAmount: typed.maximumChargeAmount.trim() || undefined,
          metadataJson: "{}",
        });
      } catch (err) {
        const refusal = refusalOf(err);
        return render(ctx, signed, { status: refusal.status, form: typed, error: fieldError(refusal) });
      }
      return redirect(ctx, `${PLANS_PATH}?done=created`);
    },
  });
}

/** The service names the field first ("amount: must be …"); an interval it could not read is UNSPECIFIED to it. */
export function fieldError(refusal: Refusal): { field: string | undefined; message: string } {
  return { field: refusal.field, message: refusal.message };
}

/** Archive or unarchive (idempotent in the service), then back to `back` with a notice. Another merchant's plan: the 404 page. */
export async function setArchived(deps: DashboardDeps, ctx: Ctx, signed: Signed, form: Form, back: string): Promise<void> {
  const id = form.planId ?? "";
  if (!isUuid(id)) return notFoundPage(deps, ctx);
  const call = { merchantId: signed.member.merchantId, id };
  try {
    if (form.action === "archive-plan") await deps.clients.catalog.archivePlan(call);
    else await deps.clients.catalog.unarchivePlan(call);
  } catch (err) {
    if (refusalOf(err).status === 404) return notFoundPage(deps, ctx);
    throw err;
  }
  return redirect(ctx, `${back}?done=${form.action === "archive-plan" ? "archived" : "unarchived"}`);
}

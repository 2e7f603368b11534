import type { Router } from "@koa/router";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { formatUtc } from "../page-text.ts";
import type { Ctx } from "../page-http.ts";
import type { DashboardFrame } from "../views.ts";
import { dashboardRoute, type DashboardDeps, type Signed } from "./member-gate.ts";
import { DASHBOARD } from "./paths.ts";
import { planNames } from "./plan-names.ts";
import { refusalOf } from "./service-refusal.ts";
import { SUBSCRIPTION_STATUS_TEXT, subscriptionStatusWords } from "./words.ts";

export const SUBSCRIPTIONS_PATH = `${DASHBOARD}/subscriptions`;
const PAGE_SIZE = 20;
/** Previous pages' cursors ride in the link (keyset paging goes forward only): capped, so a link stays short. */
const TRAIL_MAX = 50;
const CURSOR = /^[A-Za-z0-9_-]{1,200}$/;

interface DashboardSubscriptionsModel {
  frame: DashboardFrame;
  q: string;
  status: string;
  statuses: { value: string; label: string; selected: boolean }[];
  rows: { id: string; href: string; customer: string; reference: string; plan: string; status: string; statusText: string; created: string }[];
  nextHref?: string | undefined;
  previousHref?: string | undefined;
  error?: string | undefined;
}

declare module "../views.ts" {
  interface PageModels {
    "dashboard/subscriptions": DashboardSubscriptionsModel;
  }
}

const one = (value: unknown) => (typeof value === "string" ? value : "");

/**
 * Subscriptions: the merchant's list through ListSubscriptions (search by id,
 * externalReference or customer email; status filter), newest first, with
 * next/previous links. The cursor of every earlier page rides in `trail`.
 */
export function subscriptionsPage(router: Router, deps: DashboardDeps): void {
  dashboardRoute(router, deps, SUBSCRIPTIONS_PATH, {
    async get(ctx, signed) {
      const q = one(ctx.query.q).trim().slice(0, 254);
      const status = SUBSCRIPTION_STATUS_TEXT.has(one(ctx.query.status)) ? one(ctx.query.status) : "";
      const cursor = CURSOR.test(one(ctx.query.cursor)) ? one(ctx.query.cursor) : "";
      const trail = one(ctx.query.trail)
        .split(".")
        .filter((c) => c === "-" || CURSOR.test(c))
        .slice(-TRAIL_MAX);
      return render(ctx, signed, { q, status, cursor, trail });
    },
  });

  async function render(ctx: Ctx, signed: Signed, view: { q: string; status: string; cursor: string; trail: string[] }) {
    const merchantId = signed.member.merchantId;
    const base = { frame: signed.frame("Subscriptions", SUBSCRIPTIONS_PATH), q: view.q, status: view.status, statuses: statusOptions(view.status), rows: [] };
    let res;
    try {
      res = await deps.clients.subscriptions.listSubscriptions({
        merchantId,
        limit: PAGE_SIZE,
        cursor: view.cursor || undefined,
        status: view.status || undefined,
        query: view.q || undefined,
      });
    } catch (err) {
      const refusal = refusalOf(err);
      return deps.pages.page(ctx, refusal.status, "dashboard/subscriptions", { ...base, error: refusal.message });
    }
    const plans = await planNames(
      deps,
      merchantId,
      res.subscriptions.map((s) => s.planId),
    );
    const link = (params: Record<string, string>) => {
      const search = new URLSearchParams(Object.entries({ q: view.q, status: view.status, ...params }).filter(([, v]) => v !== ""));
      const text = search.toString();
      return text ? `${SUBSCRIPTIONS_PATH}?${text}` : SUBSCRIPTIONS_PATH;
    };
    const previous = view.trail.at(-1);
    deps.pages.page(ctx, 200, "dashboard/subscriptions", {
      ...base,
      rows: res.subscriptions.map((s) => ({
        id: s.id,
        href: `${SUBSCRIPTIONS_PATH}/${s.id}`,
        customer: s.customerEmail ?? "",
        reference: s.externalReference,
        plan: plans.get(s.planId) ?? s.planId,
        status: s.status,
        statusText: subscriptionStatusWords(s.status),
        created: s.createdAt ? formatUtc(timestampDate(s.createdAt)) : "",
      })),
      // "-" stands for the first page (no cursor) in the trail.
      nextHref:
        res.hasMore && res.nextCursor ? link({ cursor: res.nextCursor, trail: [...view.trail, view.cursor || "-"].slice(-TRAIL_MAX).join(".") }) : undefined,
      previousHref: view.cursor ? link({ cursor: previous && previous !== "-" ? previous : "", trail: view.trail.slice(0, -1).join(".") }) : undefined,
    });
  }
}

function statusOptions(selected: string) {
  return [
    { value: "", label: "Any status", selected: selected === "" },
    ...[...SUBSCRIPTION_STATUS_TEXT].map(([value, label]) => ({ value, label, selected: value === selected })),
  ];
}

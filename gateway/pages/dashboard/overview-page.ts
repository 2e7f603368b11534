import type { Router } from "@koa/router";
import { dashboardRoute, type DashboardDeps } from "./member-gate.ts";
import { DASHBOARD } from "./paths.ts";

export function overviewPage(router: Router, deps: DashboardDeps): void {
  dashboardRoute(router, deps, DASHBOARD, {
    async get(ctx, signed) {
      deps.pages.page(ctx, 200, "dashboard/overview", { frame: signed.frame("Overview", DASHBOARD) });
    },
  });
}

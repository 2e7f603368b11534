import type { Router } from "@koa/router";
import { amountText } from "../page-text.ts";
import { dashboardRoute, type DashboardDeps } from "./member-gate.ts";
import { DASHBOARD } from "./paths.ts";
import { pageUrl, problemOf, queryText, timeText } from "./page-kit.ts";
import { refundStatusWords } from "./words.ts";

const PATH = `${DASHBOARD}/refunds`;

/**
 * Refunds of subscription charges, newest first, with the API's filters
 * (chargeId, subscriptionId) and keyset paging: the RPC of GET /api/v1/refunds.
 * Refunds are made on a subscription's page, charge by charge.
 */
export function refundsPage(router: Router, deps: DashboardDeps): void {
  dashboardRoute(router, deps, PATH, {
    async get(ctx, signed) {
      const filters = { chargeId: queryText(ctx, "chargeId"), subscriptionId: queryText(ctx, "subscriptionId") };
      const cursor = queryText(ctx, "cursor");
      let problem: string | undefined;
      let res: Awaited<ReturnType<typeof deps.clients.refunds.listRefunds>> | undefined;
      try {
        res = await deps.clients.refunds.listRefunds({ merchantId: signed.member.merchantId, limit: 20, cursor, ...filters });
      } catch (err) {
        const p = problemOf(err);
        if (!p) throw err;
        problem = p.message;
      }
      deps.pages.page(ctx, problem ? 400 : 200, "dashboard/refunds", {
        frame: signed.frame("Refunds", PATH),
        filters: { chargeId: filters.chargeId ?? "", subscriptionId: filters.subscriptionId ?? "" },
        refunds: (res?.refunds ?? []).map((r) => ({
          id: r.id,
          created: timeText(r.createdAt),
          amount: amountText(r.amount, r.currency),
          assetAmount: amountText(r.assetAmount, r.asset),
          status: r.status,
          statusText: refundStatusWords(r.status),
          chargeId: r.chargeId,
          subscriptionId: r.subscriptionId,
          reason: r.reason ?? "",
        })),
        nextUrl: res?.hasMore ? pageUrl(PATH, filters, res.nextCursor) : undefined,
        firstUrl: cursor ? pageUrl(PATH, filters) : undefined,
        error: problem,
      });
    },
  });
}

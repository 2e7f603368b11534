import type { Router } from "@koa/router";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ASSET_CODES, BALANCE_TRANSACTION_TYPES } from "../../../services/wallet/contract.ts";
import { merchantBalance } from "../../routes/balance.ts";
import { amountText } from "../page-text.ts";
import { dashboardRoute, type DashboardDeps } from "./member-gate.ts";
import { DASHBOARD } from "./paths.ts";
import { pageUrl, problemOf, queryText, timeText } from "./page-kit.ts";
import { balanceTypeText } from "./words.ts";

const PATH = `${DASHBOARD}/balance`;

/** A date input's "YYYY-MM-DD" as the start of that day (UTC); anything else is the filter's problem to show. */
function dayStart(text: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return undefined;
  const d = new Date(`${text}T00:00:00.000Z`);
  return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== text ? undefined : d;
}

/**
 * Balance: per asset what is available and what payouts in flight hold (the
 * figures of GET /api/v1/balance), then every movement newest first with the
 * API's filters (asset, type, created after) and keyset paging: the RPC of
 * GET /api/v1/balance-transactions.
 */
export function balancePage(router: Router, deps: DashboardDeps): void {
  dashboardRoute(router, deps, PATH, {
    async get(ctx, signed) {
      const merchantId = signed.member.merchantId;
      const filters = { asset: queryText(ctx, "asset"), type: queryText(ctx, "type"), createdAfter: queryText(ctx, "createdAfter") };
      const cursor = queryText(ctx, "cursor");
      const balance = await merchantBalance(deps.clients, merchantId);
      let problem: string | undefined;
      let res: Awaited<ReturnType<typeof deps.clients.wallet.listBalanceTransactions>> | undefined;
      const after = filters.createdAfter === undefined ? undefined : dayStart(filters.createdAfter);
      if (filters.createdAfter !== undefined && !after) problem = "Created after: enter a date as YYYY-MM-DD.";
      else {
        try {
          res = await deps.clients.wallet.listBalanceTransactions({
            merchantId,
            asset: filters.asset,
            type: filters.type,
            createdAfter: after ? timestampFromDate(after) : undefined,
            limit: 20,
            cursor,
          });
        } catch (err) {
          const p = problemOf(err);
          if (!p) throw err;
          problem = p.message;
        }
      }
      const pending = new Map(balance.pending.map((p) => [p.asset, p.amount]));
      deps.pages.page(ctx, problem ? 400 : 200, "dashboard/balance", {
        frame: signed.frame("Balance", PATH),
        balances: balance.available.map((a) => ({
          asset: a.asset,
          available: amountText(a.amount, a.asset),
          pending: amountText(pending.get(a.asset) ?? "0", a.asset),
        })),
        filters: { createdAfter: filters.createdAfter ?? "" },
        assets: ASSET_CODES.map((a) => ({ value: a, label: a, selected: a === filters.asset })),
        types: BALANCE_TRANSACTION_TYPES.map((t) => ({ value: t, label: balanceTypeText(t), selected: t === filters.type })),
        transactions: (res?.transactions ?? []).map((t) => ({
          id: t.id,
          created: timeText(t.createdAt),
          type: t.type,
          typeText: balanceTypeText(t.type),
          amount: amountText(t.amount, t.asset),
          balanceAfter: amountText(t.balanceAfter, t.asset),
          source: t.sourceType && t.sourceId ? `${balanceTypeText(t.sourceType)} ${t.sourceId}` : "",
        })),
        nextUrl: res?.hasMore ? pageUrl(PATH, filters, res.nextCursor) : undefined,
        firstUrl: cursor ? pageUrl(PATH, filters) : undefined,
        error: problem,
      });
    },
  });
}

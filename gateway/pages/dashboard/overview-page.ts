import type { Router } from "@koa/router";
import { OwnerType } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { formatForPeople } from "../../../services/platform/money.ts";
import { amountText, formatUtc } from "../page-text.ts";
import type { DashboardFrame } from "../views.ts";
import { dashboardRoute, type DashboardDeps } from "./member-gate.ts";
import { DASHBOARD } from "./paths.ts";
import { volumeCharts, type VolumeChart } from "./volume-chart.ts";

interface DashboardOverviewModel {
  frame: DashboardFrame;
  balances: { asset: string; available: string; pending: string }[];
  activeSubscriptions: number;
  pastDueSubscriptions: number;
  trialingSubscriptions: number;
  /** `amount` is the figure alone as people read it (in [data-metric=mrr-<currency>]), `value` its canonical decimal (data-value); the currency is beside it. */
  mrr: { currency: string; amount: string; value: string; subscriptions: number }[];
  chargesSucceeded: number;
  chargesFailed: number;
  window: string;
  charts: VolumeChart[];
}

declare module "../views.ts" {
  interface PageModels {
    "dashboard/overview": DashboardOverviewModel;
  }
}

/**
 * Overview: the balance per asset (the same two RPCs as GET /api/v1/balance),
 * and the subscriptions service's aggregate (GetMerchantOverview): counts,
 * MRR per plan currency, the last 30 days of charges and their daily volume.
 */
export function overviewPage(router: Router, deps: DashboardDeps): void {
  const { wallet, payouts, subscriptions } = deps.clients;
  dashboardRoute(router, deps, DASHBOARD, {
    async get(ctx, signed) {
      const merchantId = signed.member.merchantId;
      const [{ accounts }, { pending }, overview] = await Promise.all([
        wallet.listAccounts({ ownerType: OwnerType.MERCHANT, ownerId: merchantId }),
        payouts.getPendingBalance({ merchantId }),
        subscriptions.getMerchantOverview({ merchantId }),
      ]);
      // Opened accounts, and any asset with money in flight, in the registry's order.
      const pendingOf = new Map(pending.map((p) => [p.asset, p.amount]));
      const balances = accounts
        .filter((a) => a.id !== "" || pendingOf.has(a.asset))
        .map((a) => ({ asset: a.asset, available: amountText(a.balance, a.asset), pending: amountText(pendingOf.get(a.asset) ?? "0", a.asset) }));
      const start = overview.windowStart ? formatUtc(new Date(Number(overview.windowStart.seconds) * 1000)) : "";
      const end = overview.windowEnd ? formatUtc(new Date(Number(overview.windowEnd.seconds) * 1000)) : "";
      deps.pages.page(ctx, 200, "dashboard/overview", {
        frame: signed.frame("Overview", DASHBOARD),
        balances,
        activeSubscriptions: overview.activeSubscriptions,
        pastDueSubscriptions: overview.pastDueSubscriptions,
        trialingSubscriptions: overview.trialingSubscriptions,
        mrr: overview.mrr.map((m) => ({ currency: m.currency, amount: formatForPeople(m.amount), value: m.amount, subscriptions: m.subscriptions })),
        chargesSucceeded: overview.chargesSucceeded,
        chargesFailed: overview.chargesFailed,
        window: `${start} to ${end}`,
        charts: volumeCharts(overview.chargedVolume),
      });
    },
  });
}

import { Router } from "@koa/router";
import type { RedisConnection as Redis } from "../../../services/platform/redis.ts";
import type { GatewayDeps } from "../../deps.ts";
import { redisLoginLimiter } from "../login-limiter.ts";
import type { PageResponder } from "../page-http.ts";
import type { DashboardDeps } from "./member-gate.ts";
import { dashboardSessions } from "./session-store.ts";
import { signInPages } from "./sign-in-pages.ts";
import { overviewPage } from "./overview-page.ts";
import { teamPage } from "./team-page.ts";
import { subscriptionsPage } from "./subscriptions-page.ts";
import { subscriptionPage } from "./subscription-page.ts";
import { plansPage } from "./plans-page.ts";
import { planPage } from "./plan-page.ts";
import { apiKeysPage } from "./api-keys-page.ts";
import { webhooksPage } from "./webhooks-page.ts";
import { eventsPage } from "./events-page.ts";
import { refundsPage } from "./refunds-page.ts";
import { balancePage } from "./balance-page.ts";
import { payoutsPage } from "./payouts-page.ts";
import { auditLogPage } from "./audit-log-page.ts";
import { exportsPage } from "./exports-page.ts";

/** The merchant dashboard (issue 24) under /dashboard: sign-in pages, then one file per page. */
export function dashboardPages(deps: GatewayDeps, redis: Redis, pages: PageResponder): Router[] {
  const prefix = deps.config.queuePrefix;
  const dashboard: DashboardDeps = {
    members: deps.clients.members,
    clients: deps.clients,
    sessions: dashboardSessions(redis, prefix, deps.config.publicBaseUrl.startsWith("https:")),
    pages,
    limits: {
      client: redisLoginLimiter(redis, `${prefix}:dashboard-client`, deps.logger),
      email: redisLoginLimiter(redis, `${prefix}:dashboard-email`, deps.logger),
    },
    publicBaseUrl: deps.config.publicBaseUrl,
  };
  const router = new Router();
  overviewPage(router, dashboard);
  subscriptionsPage(router, dashboard);
  subscriptionPage(router, dashboard);
  plansPage(router, dashboard);
  planPage(router, dashboard);
  teamPage(router, dashboard);
  apiKeysPage(router, dashboard);
  webhooksPage(router, dashboard);
  eventsPage(router, dashboard);
  refundsPage(router, dashboard);
  balancePage(router, dashboard);
  payoutsPage(router, dashboard);
  auditLogPage(router, dashboard);
  exportsPage(router, dashboard);
  return [signInPages(dashboard), router];
}

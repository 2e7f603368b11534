import type { Router } from "@koa/router";
import type { RedisConnection as Redis } from "../../services/platform/redis.ts";
import type { GatewayDeps } from "../deps.ts";
import { approvalPages } from "./approval-pages.ts";
import { customerAuth } from "./customer-auth.ts";
import { redisLoginLimiter } from "./login-limiter.ts";
import { pageResponder } from "./page-http.ts";
import { deriveSessionKey, sessionCodec } from "./page-session.ts";
import { subscriptionApproval } from "./subscription-approval.ts";
import { changeApproval } from "./change-approval.ts";
import { selfServicePages } from "./self-service-pages.ts";
import { pageViews } from "./views.ts";
import { claimPages } from "./claim-pages.ts";
import { dashboardPages } from "./dashboard/index.ts";
import { receiptPages } from "./receipt-pages.ts";

/** The customer-facing pages and the merchant dashboard, mounted by the gateway after the API routes. */
export function hostedPages(deps: GatewayDeps, redis: Redis): Router[] {
  const sessions = sessionCodec(deriveSessionKey(deps.config.secretsKey), deps.config.publicBaseUrl.startsWith("https:"));
  const limiter = redisLoginLimiter(redis, deps.config.queuePrefix, deps.logger);
  const auth = customerAuth({ wallet: deps.clients.wallet, sessions, limiter });
  const shared = { sessions, auth, pages: pageResponder(pageViews(), deps.logger) };
  return [
    approvalPages({ ...shared, basePath: "/authorize", provider: subscriptionApproval(deps.clients.subscriptions) }),
    approvalPages({ ...shared, basePath: "/change", provider: changeApproval(deps.clients.subscriptions) }),
    selfServicePages({ ...shared, subscriptions: deps.clients.subscriptions }),
    claimPages({ payouts: deps.clients.payouts, sessions, limiter, pages: shared.pages }),
    ...dashboardPages(deps, redis, shared.pages),
    receiptPages({ pricing: deps.clients.pricing, pages: shared.pages }),
  ];
}

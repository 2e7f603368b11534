import type { Middleware } from "koa";
import type { GatewayState } from "../route.ts";
import { runInCall } from "../../services/platform/audit/call-context.ts";

/**
 * Opens the request's call context (services/platform/audit/call-context.ts):
 * where it came from now, who it is once a middleware authenticates it (API
 * key, operator key, dashboard member, hosted-page customer). Every RPC the
 * request makes carries it, and the services audit what it changes.
 */
export function callContext(): Middleware<GatewayState> {
  return (ctx, next) =>
    runInCall({ actor: undefined, ip: ctx.ip, userAgent: ctx.get("user-agent") || undefined, requestId: ctx.state.requestId }, () => next());
}

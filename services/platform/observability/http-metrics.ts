import { performance } from "node:perf_hooks";
import type { Middleware } from "koa";
import type { BillingMetrics } from "./metrics.ts";

/**
 * Outermost Koa middleware: one observation per request, labelled with the
 * route template @koa/router matched (`/api/v1/subscriptions/:id`), never the
 * raw path. A handler outside the routers (the queue dashboard) may name its
 * route in `ctx.state.metricsRoute`; anything else is "unmatched".
 */
export function httpMetrics(metrics: BillingMetrics): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = (ctx.state as { metricsRoute?: string }).metricsRoute ?? (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      metrics.httpServerDuration.observe(
        {
          http_request_method: KNOWN_METHODS.has(ctx.method) ? ctx.method : "_OTHER",
          http_route: typeof route === "string" ? route : "unmatched",
          http_response_status_code: String(ctx.status),
        },
        (performance.now() - started) / 1000,
      );
    }
  };
}

/** OpenTelemetry's rule: methods outside the known set are reported as _OTHER (bounded labels). */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]);

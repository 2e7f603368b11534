import Koa, { type Middleware } from "koa";
import type { Router } from "@koa/router";
import { bodyParser } from "@koa/bodyparser";
import type { GatewayDeps } from "./deps.ts";
import type { GatewayState, RouteSpec } from "./route.ts";
import { errorHandler } from "./middleware/error-handler.ts";
import { requestId } from "./middleware/request-id.ts";
import { callContext } from "./middleware/call-context.ts";
import { accessLog } from "./middleware/access-log.ts";
import { clientAddress } from "./middleware/client-address.ts";
import { mountRoutes } from "./mount.ts";
import { allRoutes } from "./routes/index.ts";
import { buildOpenApiDocument } from "./openapi/document.ts";
import type { IdempotencyStore } from "./idempotency.ts";
import type { ApiKeyLookupCache } from "./middleware/api-key.ts";
import type { BillingMetrics } from "../services/platform/observability/metrics.ts";
import { httpMetrics } from "../services/platform/observability/http-metrics.ts";
import { bodyParseError } from "./validation/body-parse-error.ts";
import { matchedRoute } from "./matched-route.ts";
import { RoutersByPrefix } from "./routers-by-prefix.ts";

const BODY_LIMIT = "100kb";

interface GatewayOptions {
  idempotencyStore: IdempotencyStore;
  /** Extra routers (e.g. the hosted pages) mounted after the API. */
  extraRouters?: Router<GatewayState>[];
  routes?: RouteSpec[];
  /** Cache of API-key lookups (kept fresh by revocation announcements). */
  apiKeyCache?: ApiKeyLookupCache;
  /** Records http_server_request_duration_seconds (outermost, so it sees the final status). */
  metrics?: BillingMetrics;
  /** Mounted before body parsing and the API (the queue dashboard brings its own). */
  middleware?: Middleware[];
}

/** Builds the Koa app; start-gateway.ts listens. */
export function createGatewayApp(deps: GatewayDeps, options: GatewayOptions): Koa<GatewayState> {
  // Forwarded headers count only when TRUST_PROXY says so (clientAddress drops them from untrusted peers).
  const app = new Koa<GatewayState>({ proxy: deps.config.trustProxy !== false });
  const routes = options.routes ?? allRoutes;
  if (options.metrics) app.use(httpMetrics(options.metrics));
  app.use(errorHandler(deps.logger));
  app.use(clientAddress(deps.config.trustProxy));
  app.use(requestId());
  app.use(callContext());
  app.use(accessLog(deps.logger));
  for (const m of options.middleware ?? []) app.use(m);
  const api = new RoutersByPrefix();
  const routers = () => [...api.all(), ...(options.extraRouters ?? [])];
  // Bodies are parsed before the routers run (every router's routes read them), so a refused body
  // (malformed JSON, 413) never reaches a router: name the route it was for, or metrics say `unmatched`.
  app.use(
    bodyParser({
      enableTypes: ["json", "form"],
      jsonLimit: BODY_LIMIT,
      formLimit: BODY_LIMIT,
      jsonStrict: true,
      onError: (err, ctx) => {
        const route = matchedRoute(routers(), ctx.method, ctx.path);
        if (route) (ctx.state as GatewayState).metricsRoute = route;
        throw bodyParseError(err);
      },
    }),
  );

  api.routerFor("/healthz").get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  api.routerFor("/readyz").get("/readyz", async (ctx) => {
    const checks = await deps.readiness();
    const ready = Object.values(checks).every((v) => v === "ok");
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? "ready" : "not_ready", checks };
  });
  const openapi = buildOpenApiDocument(routes, "/");
  api.routerFor("/api/v1/openapi.json").get("/api/v1/openapi.json", (ctx) => {
    ctx.body = openapi;
  });
  mountRoutes((template) => api.routerFor(template), routes, deps, options.idempotencyStore, options.apiKeyCache);

  app.use(api.middleware());
  for (const extra of options.extraRouters ?? []) {
    app.use(extra.routes());
    app.use(extra.allowedMethods({ throw: true }));
  }
  return app;
}

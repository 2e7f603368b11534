import type { Middleware } from "koa";
import type { Router } from "@koa/router";
import type { GatewayDeps } from "./deps.ts";
import { BinaryBody, JsonText, type GatewayContext, type GatewayState, type RouteSpec } from "./route.ts";
import { HttpError } from "./http-errors.ts";
import { apiKey, type ApiKeyLookupCache } from "./middleware/api-key.ts";
import { adminKey } from "./middleware/admin-key.ts";
import { compileBody, compileQuery, describeErrors } from "./validation/ajv.ts";
import { findUnstorable } from "./validation/storable-text.ts";
import { findInexactNumber } from "../services/platform/exact-numbers.ts";
import { findKeyProblem } from "../services/platform/json-keys.ts";
import { idempotency, type IdempotencyStore } from "./idempotency.ts";

/**
 * Mounts each RouteSpec: auth → content type → validation (defaults applied)
 * → optional idempotency → handler. Handlers return {status, body}.
 */
export function mountRoutes(
  routerFor: (template: string) => Router<GatewayState>,
  routes: RouteSpec[],
  deps: GatewayDeps,
  store?: IdempotencyStore,
  keyCache?: ApiKeyLookupCache,
): void {
  const requireApiKey = apiKey(deps.clients, keyCache);
  const requireAdmin = adminKey(deps.config.adminApiKey);
  for (const route of routes) {
    const chain: Middleware<GatewayState>[] = [];
    if (route.available && !route.available(deps.config)) {
      chain.push(async (ctx) => {
        throw new HttpError(404, "NOT_FOUND", `no route for ${ctx.method} ${ctx.path}`);
      });
    }
    if (route.auth === "apiKey") chain.push(requireApiKey);
    // Before validation and idempotency: a refused request costs nothing and is never stored as a key's result.
    if (route.auth === "apiKey" && deps.rateLimiter) chain.push(deps.rateLimiter.middleware);
    if (route.auth === "admin") chain.push(requireAdmin as Middleware<GatewayState>);
    chain.push(validation(route));
    if (route.idempotent) {
      // (Handlers of idempotent routes answer values: the stored result is replayed as a value.)
      if (!store) throw new Error(`route ${route.operationId} is idempotent but no idempotency store was given`);
      chain.push(
        idempotency(store, route.operationId, (err) =>
          deps.logger.warn({ err: (err as Error).message, operationId: route.operationId }, "idempotency key's answer not recorded; the claim expires instead"),
        ),
      );
    }
    chain.push(async (ctx) => {
      const c = ctx as GatewayContext & { params: Record<string, string> };
      const result = await route.handler({ body: c.state.body, query: c.state.query, params: c.params, merchantId: c.state.merchantId ?? "" }, deps, c);
      ctx.status = result.status;
      if (result.body instanceof JsonText) {
        ctx.type = "application/json";
        ctx.body = result.body.text;
      } else if (result.body instanceof BinaryBody) {
        ctx.set(result.body.headers);
        ctx.type = result.body.contentType;
        ctx.body = Buffer.from(result.body.bytes);
      } else if (result.body !== undefined) ctx.body = result.body;
    });
    routerFor(route.path)[route.method](route.path, ...(chain as Middleware[]));
  }
}

function validation(route: RouteSpec): Middleware<GatewayState> {
  const validateBody = route.body ? compileBody(route.body) : undefined;
  const validateQuery = route.query ? compileQuery(route.query) : undefined;
  return async (ctx, next) => {
    rejectUnstorable((ctx as { params?: Record<string, string> }).params ?? {});
    if (validateBody) {
      const hasBody = Number(ctx.get("content-length") || 0) > 0 || ctx.get("transfer-encoding") !== "";
      if (hasBody && !ctx.is("application/json")) {
        throw new HttpError(415, "UNSUPPORTED_MEDIA_TYPE", "request body must be application/json");
      }
      const body = hasBody ? (ctx.request as { body?: unknown }).body : {};
      const raw = hasBody ? (ctx.request as { rawBody?: unknown }).rawBody : undefined;
      // Before the schema: with a key sent twice, the parsed body is not what was sent.
      const keyProblem = typeof raw === "string" ? findKeyProblem(raw) : undefined;
      if (keyProblem) throw new HttpError(400, "INVALID_REQUEST", keyProblem.message, [keyProblem]);
      if (!validateBody(body)) {
        const { message, details } = describeErrors(validateBody.errors, "body");
        throw new HttpError(400, "INVALID_REQUEST", message, details);
      }
      rejectUnstorable(body);
      const inexact = typeof raw === "string" ? findInexactNumber(raw) : undefined;
      if (inexact) throw new HttpError(400, "INVALID_REQUEST", inexact.message, [inexact]);
      ctx.state.body = body;
    }
    const query = { ...ctx.query };
    if (validateQuery) {
      if (!validateQuery(query)) {
        const { message, details } = describeErrors(validateQuery.errors, "query");
        throw new HttpError(400, "INVALID_REQUEST", message, details);
      }
    }
    rejectUnstorable(query);
    ctx.state.query = query;
    await next();
  };
}

function rejectUnstorable(value: unknown): void {
  const problem = findUnstorable(value, "");
  if (problem) throw new HttpError(400, "INVALID_REQUEST", problem.message, [problem]);
}

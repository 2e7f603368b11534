import type { Middleware, Next } from "koa";
import { Router } from "@koa/router";
import type { GatewayContext, GatewayState } from "./route.ts";

/** How many leading path segments name a group: `/api/v1/subscriptions`, `/admin/v1/merchants`. */
const KEY_SEGMENTS = 3;

/** The lowercased leading segments of a path (the router matches case-insensitively, and ignores a trailing slash). */
const segmentsOf = (path: string) =>
  path
    .toLowerCase()
    .split("/")
    .filter((s) => s !== "");

/** A route template's leading literal segments, up to the first parameter or wildcard. */
function literalPrefix(template: string): string[] {
  const literal: string[] = [];
  for (const segment of segmentsOf(template)) {
    if (/[:*(?]/.test(segment)) break;
    literal.push(segment);
  }
  return literal;
}

/**
 * The API's routes in one router per path prefix (its first three segments),
 * so a request is matched against its group's few route patterns instead of
 * all of them: @koa/router tests every pattern of a router, and logs each test
 * through `debug`, on every request (about 4 % of a read's CPU with one router
 * for the whole API). A route whose first three segments are not all literal
 * goes to one router of the rest, which must share no prefix with a group, so
 * that a request is served by exactly the routes one router would have
 * served (checked when the middleware is built). Each router keeps its own 405
 * (allowedMethods); a path no group or rest route matches goes on to what is
 * mounted next.
 */
export class RoutersByPrefix {
  private readonly groups = new Map<string, Router<GatewayState>>();
  private readonly rest = new Router<GatewayState>();

  /** The router a route with this template belongs in. */
  routerFor(template: string): Router<GatewayState> {
    const literal = literalPrefix(template);
    if (literal.length < KEY_SEGMENTS) return this.rest;
    const key = literal.slice(0, KEY_SEGMENTS).join("/");
    let router = this.groups.get(key);
    if (!router) this.groups.set(key, (router = new Router<GatewayState>()));
    return router;
  }

  /** Every router (the rest first), for a lookup that must see all routes (matchedRoute). */
  all(): Router<GatewayState>[] {
    return [this.rest, ...this.groups.values()];
  }

  /** Dispatches a request to its group's router, else to the rest's. */
  middleware(): Middleware<GatewayState> {
    this.checkDisjoint();
    const dispatch = new Map<string, Middleware<GatewayState>>();
    for (const [key, router] of this.groups) dispatch.set(key, withAllowedMethods(router));
    const rest = withAllowedMethods(this.rest);
    return (ctx, next) => {
      const key = segmentsOf(ctx.path).slice(0, KEY_SEGMENTS).join("/");
      return (dispatch.get(key) ?? rest)(ctx, next);
    };
  }

  /** A rest route whose literal prefix starts a group's key could match that group's requests: refused at start. */
  private checkDisjoint(): void {
    for (const layer of this.rest.stack) {
      if (typeof layer.path !== "string") continue;
      const literal = literalPrefix(layer.path).join("/");
      for (const key of this.groups.keys()) {
        if (literal === "" || key === literal || key.startsWith(`${literal}/`)) {
          throw new Error(`route ${layer.path} could match requests of the group /${key}: give it a literal prefix of its own`);
        }
      }
    }
  }
}

function withAllowedMethods(router: Router<GatewayState>): Middleware<GatewayState> {
  const routes = router.routes() as unknown as Middleware<GatewayState>;
  const allowed = router.allowedMethods({ throw: true }) as unknown as Middleware<GatewayState>;
  return (ctx, next: Next) => routes(ctx as GatewayContext, () => allowed(ctx, next));
}

import type { Router } from "@koa/router";

/**
 * The route template one of `routers` would serve this request with, as
 * @koa/router sets `_matchedRoute` when it dispatches: the last layer that
 * matches path and method and is a route (not `router.use` middleware).
 * For a request that fails before the routers run (the body parser refused
 * its body), so that http_route names the route and not `unmatched`.
 */
export function matchedRoute(routers: readonly Router<any>[], method: string, path: string): string | undefined {
  for (const router of routers) {
    const layer = router.match(path, method).pathAndMethod.findLast((l) => l.methods.length > 0);
    if (layer && typeof layer.path === "string") return layer.path;
  }
  return undefined;
}

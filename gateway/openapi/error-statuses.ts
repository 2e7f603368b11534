import type { RouteSpec } from "../route.ts";

/** Methods whose bodies the body parser reads (its default parsedMethods, as configured in app.ts). */
const PARSED_METHODS = new Set<RouteSpec["method"]>(["post", "patch"]);

/**
 * Every error status an operation can answer, derived from how mount.ts and
 * app.ts build its middleware chain, plus the statuses its handler's services
 * can answer (`route.errors`). The OpenAPI document lists exactly these, and a
 * test compares every answer seen in the suite with it.
 */
export function errorStatusesOf(route: RouteSpec): number[] {
  const statuses = new Set<number>(route.errors ?? []);
  // Path and query values are always checked for storable text; parsed bodies may be malformed JSON.
  statuses.add(400);
  if (PARSED_METHODS.has(route.method)) statuses.add(413); // the body limit applies to any parsed body
  if (route.body) statuses.add(415);
  if (route.auth !== "none") statuses.add(401);
  if (route.auth === "apiKey") statuses.add(429); // the per-merchant rate limit
  // Not available in this mode, an id in the path not found, or the operator API off (ADMIN_API_KEY unset).
  if (route.available || route.path.includes("/:") || route.auth === "admin") statuses.add(404);
  if (route.idempotent) statuses.add(409);
  // Every handler calls a service: one that is down (or an idempotency store that is) is a retryable 503.
  statuses.add(503);
  // …and one that does not answer within RPC_TIMEOUT_MS is 504 TIMEOUT (http-errors.ts), the outcome not known yet.
  statuses.add(504);
  statuses.add(500);
  return [...statuses].sort((a, b) => a - b);
}

import type { Middleware } from "koa";
import type { Logger } from "../../services/platform/logger.ts";
import type { GatewayState } from "../route.ts";

/**
 * Hosted-page paths carry single-use approval tokens (…/authorize/<token>,
 * …/approve/<token>): they are bearer secrets and never reach a log line.
 */
export function redactPath(path: string): string {
  return path.replace(/\/(authorize|approve|change|changes)\/[^/]+/g, "/$1/[token]");
}

/** One line per request, without headers or bodies (they carry secrets). */
export function accessLog(logger: Logger): Middleware<GatewayState> {
  return async (ctx, next) => {
    // A debug line nobody reads costs its redaction and its object on every request: skip them when the level is off.
    if (!logger.isLevelEnabled("debug")) return next();
    const started = performance.now();
    try {
      await next();
    } finally {
      logger.debug(
        { method: ctx.method, path: redactPath(ctx.path), status: ctx.status, ms: Math.round(performance.now() - started), requestId: ctx.state.requestId },
        "request",
      );
    }
  };
}

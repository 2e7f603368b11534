import type { Middleware } from "koa";
import type { Logger } from "../../services/platform/logger.ts";
import type { GatewayState } from "../route.ts";

/** One line per request, without headers or bodies (they carry secrets). */
export function accessLog(logger: Logger): Middleware<GatewayState> {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      logger.debug(
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - started), requestId: ctx.state.requestId },
        "request",
      );
    }
  };
}

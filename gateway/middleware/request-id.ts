import { randomUUID } from "node:crypto";
import type { Middleware } from "koa";
import type { GatewayState } from "../route.ts";

/** Echoes a caller's X-Request-Id (when sane) or makes one, for log correlation. */
export function requestId(): Middleware<GatewayState> {
  return async (ctx, next) => {
    const given = ctx.get("x-request-id");
    const id = /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();
    ctx.state.requestId = id;
    ctx.set("X-Request-Id", id);
    await next();
  };
}

import type { Middleware } from "koa";
import { ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../services/platform/logger.ts";
import { HttpError, fromConnectError } from "../http-errors.ts";
import { redactPath } from "./access-log.ts";
import { OutageLog } from "../../services/platform/outage-log.ts";

/** Errors from koa/co-body carry an HTTP status; these are the client ones we expect. */
const CLIENT_ERRORS: Record<number, { code: string; message: string }> = {
  400: { code: "MALFORMED_JSON", message: "request body is not valid JSON" },
  405: { code: "METHOD_NOT_ALLOWED", message: "method not allowed for this path" },
  413: { code: "PAYLOAD_TOO_LARGE", message: "request body is larger than the limit" },
  415: { code: "UNSUPPORTED_MEDIA_TYPE", message: "request body must be application/json" },
  501: { code: "NOT_IMPLEMENTED", message: "method not implemented" },
};

/**
 * First middleware: every failure leaves as `{"error", "message"}`. Client
 * errors say what was wrong; anything else is logged whole and answered with
 * a bare 500, never a stack trace or SQL.
 */
export function errorHandler(logger: Logger): Middleware {
  // 503/504 (a service or its database away) are one outage: logged when it starts and when it ends, not per request.
  const outage = new OutageLog(logger, "services");
  return async (ctx, next) => {
    try {
      await next();
      if (outage.down && ctx.status < 500) outage.succeeded();
      // Nothing answered: an unknown route gets the error body too.
      if (ctx.status === 404 && ctx.body == null) {
        ctx.status = 404;
        ctx.body = { error: "NOT_FOUND", message: `no route for ${ctx.method} ${ctx.path}` };
      }
    } catch (err) {
      const httpError = toHttpError(err);
      if (httpError.status === 503 || httpError.status === 504) outage.failed(err, { method: ctx.method, path: redactPath(ctx.path) });
      else if (httpError.status >= 500) logger.error({ err, method: ctx.method, path: redactPath(ctx.path) }, "request failed");
      ctx.status = httpError.status;
      ctx.body = {
        error: httpError.code,
        message: httpError.message,
        ...(httpError.details && { details: httpError.details }),
      };
    }
  };
}

function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof ConnectError) return fromConnectError(err);
  const status = (err as { status?: number }).status;
  const known = status !== undefined ? CLIENT_ERRORS[status] : undefined;
  if (known && (err as { expose?: boolean }).expose !== false) return new HttpError(status!, known.code, known.message);
  return new HttpError(500, "INTERNAL_ERROR", "internal error");
}

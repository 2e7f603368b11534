import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ConnectionException } from "@mikro-orm/core";
import { DomainError, type ErrorKind } from "../errors.ts";
import type { Logger } from "../logger.ts";

/** Response header that carries the merchant-facing error code across RPC. */
export const ERROR_CODE_HEADER = "billing-error-code";

const CODE_BY_KIND: Record<ErrorKind, Code> = {
  invalid: Code.InvalidArgument,
  not_found: Code.NotFound,
  conflict: Code.AlreadyExists,
  failed_precondition: Code.FailedPrecondition,
  unauthenticated: Code.Unauthenticated,
  rate_limited: Code.ResourceExhausted,
  unavailable: Code.Unavailable,
};

/** The one translator from domain errors to Connect errors. */
export function toConnectError(err: unknown, logger: Logger, procedure: string): ConnectError {
  if (err instanceof DomainError) {
    return new ConnectError(err.message, CODE_BY_KIND[err.kind], { [ERROR_CODE_HEADER]: err.code }, undefined, err);
  }
  if (err instanceof ConnectError) return err;
  if (isDatabaseUnavailable(err)) {
    // Retryable: the caller answers 503, SREs see the cause in the log.
    logger.error({ err, procedure }, "database unavailable");
    return new ConnectError("service temporarily unavailable", Code.Unavailable, { [ERROR_CODE_HEADER]: "SERVICE_UNAVAILABLE" }, undefined, err);
  }
  // Anything else is our bug or an infrastructure failure: log it whole, answer without details.
  logger.error({ err, procedure }, "rpc failed");
  return new ConnectError("internal error", Code.Internal, { [ERROR_CODE_HEADER]: "INTERNAL_ERROR" }, undefined, err);
}

export function errorInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      throw toConnectError(err, logger, req.method.name);
    }
  };
}

/** Reads the domain code of an RPC failure on the client side. */
export function errorCodeOf(err: ConnectError): string | undefined {
  return err.metadata.get(ERROR_CODE_HEADER) ?? undefined;
}

/** Postgres unreachable, restarting, or out of connections: a retry can succeed. */
const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "57P01", "57P02", "57P03", "53300", "08001", "08006"]);

function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof ConnectionException) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && UNAVAILABLE_CODES.has(code);
}

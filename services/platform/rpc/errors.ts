import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ConnectionException } from "@mikro-orm/core";
import { DomainError, type ErrorKind } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { OutageLog } from "../outage-log.ts";
import { ERROR_CODE_HEADER } from "./error-code.ts";

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
export function toConnectError(err: unknown, logger: Logger, procedure: string, outage?: OutageLog): ConnectError {
  if (err instanceof DomainError) {
    return new ConnectError(err.message, CODE_BY_KIND[err.kind], { [ERROR_CODE_HEADER]: err.code }, undefined, err);
  }
  if (err instanceof ConnectError) return err;
  if (isStatementTimeout(err)) {
    logger.error({ err, procedure }, "database statement timed out");
    return new ConnectError("the database did not answer in time", Code.DeadlineExceeded, { [ERROR_CODE_HEADER]: "TIMEOUT" }, undefined, err);
  }
  if (isDatabaseUnavailable(err)) {
    // Retryable: the caller answers 503; SREs see the outage once when it starts and once when it ends.
    if (outage) outage.failed(err, { procedure });
    else logger.error({ err, procedure }, "database unavailable");
    return new ConnectError("service temporarily unavailable", Code.Unavailable, { [ERROR_CODE_HEADER]: "SERVICE_UNAVAILABLE" }, undefined, err);
  }
  // Anything else is our bug or an infrastructure failure: log it whole, answer without details.
  logger.error({ err, procedure }, "rpc failed");
  return new ConnectError("internal error", Code.Internal, { [ERROR_CODE_HEADER]: "INTERNAL_ERROR" }, undefined, err);
}

export function errorInterceptor(logger: Logger): Interceptor {
  const outage = new OutageLog(logger, "database");
  return (next) => async (req) => {
    try {
      const res = await next(req);
      if (outage.down) outage.succeeded();
      return res;
    } catch (err) {
      throw toConnectError(err, logger, req.method.name, outage);
    }
  };
}

/**
 * Postgres unreachable, restarting, or out of connections: a retry can succeed.
 * 25006 (read_only_sql_transaction): a write reached a standby, i.e. a node
 * demoted by a failover that the proxy in front (HAProxy, PgBouncer) still
 * routed to for a moment; the leader serves the retry.
 */
const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "57P01", "57P02", "57P03", "53300", "25006"]);

/**
 * SQLSTATE class 08, connection exception: 08001/08006 from PostgreSQL, and
 * 08P01, which PgBouncer uses for its own failures ("pgbouncer cannot connect
 * to server", query_wait_timeout, server conn crashed).
 */
const CONNECTION_EXCEPTION_CLASS = /^08[0-9A-Z]{3}$/;

/**
 * What pg and pg-pool say, without a code, when a connection dies under a
 * statement, a dead client is used, or no slot/connection comes in time.
 */
const UNAVAILABLE_MESSAGES = [
  /Connection terminated/i,
  /Client was closed and is not queryable/i,
  /Client has encountered a connection error and is not queryable/i,
  /timeout exceeded when trying to connect/i,
  /connection ended while checked out/i,
  /Query read timeout/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

/** The error and its causes (MikroORM and Kysely wrap the driver's error). */
function* causes(err: unknown): Generator<unknown> {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) yield e;
}

export function isDatabaseUnavailable(err: unknown): boolean {
  for (const e of causes(err)) {
    if (e instanceof ConnectionException) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (UNAVAILABLE_CODES.has(code) || CONNECTION_EXCEPTION_CLASS.test(code))) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === "string" && UNAVAILABLE_MESSAGES.some((m) => m.test(message))) return true;
  }
  return false;
}

/** statement_timeout (DB_STATEMENT_TIMEOUT_MS) cancelled the statement: 504, retryable. */
function isStatementTimeout(err: unknown): boolean {
  for (const e of causes(err)) {
    if ((e as { code?: unknown }).code === "57014") return true;
  }
  return false;
}

import { Code, ConnectError } from "@connectrpc/connect";
import { errorCodeOf } from "../services/platform/rpc/error-code.ts";
import { isTransportFailure } from "../services/platform/rpc/transport-failure.ts";

/**
 * A failure with a merchant-facing status, code and message. It is a verdict, not a fault, so it carries no stack:
 * nobody reads one (a 500 logs the error that caused it, never an HttpError made of it), and capturing it through
 * the middleware chain cost ~15 µs a refusal, a tenth of the gateway's CPU while a merchant bursts at 10× its rate
 * limit.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown[] | undefined;

  constructor(status: number, code: string, message: string, details?: unknown[]) {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** The one table from Connect codes to HTTP statuses, for a service's verdict (an error with a domain code). */
const STATUS_BY_CONNECT_CODE: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 400,
  [Code.OutOfRange]: 400,
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.FailedPrecondition]: 409,
  [Code.Aborted]: 409,
  [Code.ResourceExhausted]: 429,
  [Code.Unavailable]: 503,
  [Code.DeadlineExceeded]: 504,
};

export function fromConnectError(err: ConnectError): HttpError {
  const domainCode = errorCodeOf(err);
  if (!domainCode) return withoutVerdict(err);
  const status = STATUS_BY_CONNECT_CODE[err.code] ?? 500;
  if (status === 500) return new HttpError(500, "INTERNAL_ERROR", "internal error");
  // Connect prefixes messages with the code name ("[not_found] …"): the raw message is what we wrote.
  return new HttpError(status, domainCode, err.rawMessage);
}

/**
 * Without a domain code the service gave no verdict on the request: the call
 * broke on the way (a services process killed mid-call reads "read
 * ECONNRESET", which connect-node calls Aborted) or the fault is ours (a wrong
 * service token, an unimplemented method). Never the merchant's fault, so
 * never a 4xx, and its text names internals, so it is never shown. A broken
 * call is a retryable 503, which no Idempotency-Key keeps as its answer.
 */
function withoutVerdict(err: ConnectError): HttpError {
  if (err.code === Code.DeadlineExceeded) return new HttpError(504, "TIMEOUT", "a service did not answer in time; retry later");
  if (isTransportFailure(err)) return new HttpError(503, "SERVICE_UNAVAILABLE", "a service is temporarily unavailable; retry later");
  return new HttpError(500, "INTERNAL_ERROR", "internal error");
}

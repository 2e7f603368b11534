import { Code, ConnectError } from "@connectrpc/connect";
import { errorCodeOf } from "../services/platform/rpc/errors.ts";

/** A failure with a merchant-facing status, code and message. */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown[] | undefined;

  constructor(status: number, code: string, message: string, details?: unknown[]) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** The one table from Connect codes to HTTP statuses. */
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

const DEFAULT_CODE_BY_STATUS: Record<number, string> = {
  400: "INVALID_REQUEST",
  401: "UNAUTHENTICATED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  429: "RATE_LIMITED",
  503: "SERVICE_UNAVAILABLE",
  504: "TIMEOUT",
};

export function fromConnectError(err: ConnectError): HttpError {
  const domainCode = errorCodeOf(err);
  // Without a domain code the failure is the transport's or ours (a service down, a wrong
  // service token): never the merchant's fault, and its text names internal addresses.
  if (!domainCode) {
    if (err.code === Code.Unavailable) return new HttpError(503, "SERVICE_UNAVAILABLE", "a service is temporarily unavailable; retry later");
    if (err.code === Code.DeadlineExceeded) return new HttpError(504, "TIMEOUT", "a service did not answer in time; retry later");
    if (err.code === Code.Unauthenticated || err.code === Code.PermissionDenied) return new HttpError(500, "INTERNAL_ERROR", "internal error");
  }
  const status = STATUS_BY_CONNECT_CODE[err.code] ?? 500;
  if (status === 500) return new HttpError(500, "INTERNAL_ERROR", "internal error");
  // Connect prefixes messages with the code name ("[not_found] …"): the raw message is what we wrote.
  const code = domainCode ?? DEFAULT_CODE_BY_STATUS[status] ?? "ERROR";
  return new HttpError(status, code, err.rawMessage);
}

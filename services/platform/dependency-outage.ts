import { Code, ConnectError } from "@connectrpc/connect";
import { isDatabaseUnavailable } from "./rpc/errors.ts";
import { errorCodeOf } from "./rpc/error-code.ts";
import { isTransportFailure } from "./rpc/transport-failure.ts";
import { DomainError } from "./errors.ts";

/**
 * A dependency being down (Postgres, a service, Redis), as opposed to a
 * failure of the work itself: outages are logged once (OutageLog) and the
 * work waits for the next sweep, while a work item's own failure is reported
 * on its own.
 */
export function isOutage(err: unknown): boolean {
  if (isDatabaseUnavailable(err)) return true;
  // A wallet call that failed is answered as SERVICE_UNAVAILABLE (wallet-calls/): an outage only if what failed under it was one.
  if (err instanceof DomainError && err.kind === "unavailable" && err.cause !== undefined) return isOutage(err.cause);
  if (err instanceof ConnectError) return isRpcOutage(err);
  // Redis and raw sockets: the message is all there is (ioredis's "Connection is closed" has no code).
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === "string" && /ECONNREFUSED|ECONNRESET|Connection is closed|ETIMEDOUT/.test(message);
}

/**
 * A service's verdict (a domain code) is about the work, never an outage,
 * except SERVICE_UNAVAILABLE: the service saying its own database is down
 * (rpc/errors.ts). Without a verdict, the call broke on the way
 * (isTransportFailure, the same test the gateway answers 503 by) or timed out.
 */
function isRpcOutage(err: ConnectError): boolean {
  const domainCode = errorCodeOf(err);
  if (domainCode !== undefined) return domainCode === "SERVICE_UNAVAILABLE";
  return err.code === Code.DeadlineExceeded || isTransportFailure(err);
}

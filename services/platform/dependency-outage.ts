import { Code, ConnectError } from "@connectrpc/connect";
import { isDatabaseUnavailable } from "./rpc/errors.ts";
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
  if (err instanceof ConnectError) return err.code === Code.Unavailable || err.code === Code.DeadlineExceeded;
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === "string" && /ECONNREFUSED|ECONNRESET|Connection is closed|ETIMEDOUT/.test(message);
}

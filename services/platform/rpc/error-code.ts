import type { ConnectError } from "@connectrpc/connect";

/**
 * The merchant-facing error code an RPC failure carries: written by the
 * services (errors.ts), read by every client. Kept apart from errors.ts so
 * a client (the gateway) reads it without loading the ORM that the
 * server-side translator needs.
 */
export const ERROR_CODE_HEADER = "billing-error-code";

/** Reads the domain code of an RPC failure on the client side. */
export function errorCodeOf(err: ConnectError): string | undefined {
  return err.metadata.get(ERROR_CODE_HEADER) ?? undefined;
}

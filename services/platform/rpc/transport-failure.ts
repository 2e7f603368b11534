import { Code, type ConnectError } from "@connectrpc/connect";

/**
 * Whether an RPC failed on the way rather than with the service's verdict:
 * the connection was refused, reset (a services process killed: "read
 * ECONNRESET"), closed, sent GOAWAY, or a stream was reset. A retry can pass.
 *
 * connect-node reports these under several codes, none of them Unavailable
 * alone (seen with connect-node 2.2 over HTTP/2, test/gateway/idempotency-retryable.test.ts):
 * a reset socket is Aborted, a closed one Canceled ("http/2 stream closed with
 * error code CANCEL"), a reset stream or GOAWAY Internal with an
 * ERR_HTTP2_STREAM_ERROR / ERR_HTTP2_SESSION_ERROR cause, a refused
 * connection Unavailable. Our services never answer Unavailable, Aborted or
 * Canceled without a domain code, so those are always the transport's; for
 * any other code the Node error in the cause chain decides.
 * Callers check for a domain code first (a service's own verdict wins).
 */
export function isTransportFailure(err: ConnectError): boolean {
  if (err.code === Code.Unavailable || err.code === Code.Aborted || err.code === Code.Canceled) return true;
  if (RESET_MESSAGE.test(err.rawMessage)) return true;
  for (let e: unknown = err.cause, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (NETWORK_CODES.has(code) || code.startsWith("ERR_HTTP2_"))) return true;
  }
  return false;
}

/** Node's codes for a connection that broke or never came up. */
const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ERR_STREAM_PREMATURE_CLOSE",
  "ERR_STREAM_DESTROYED",
]);

/** connect-node's text for an HTTP/2 RST_STREAM it maps itself (connectErrorFromH2ResetCode), which has no cause. */
const RESET_MESSAGE = /^http\/2 stream closed with error code /;

import type http2 from "node:http2";

type NodeHeaders = Record<string, string | string[] | number | undefined>;

/**
 * Two fixes to the gRPC status that leaves this server, applied where the
 * headers and trailers are written:
 *
 * - `grpc-message` is percent-encoded as the gRPC spec says (only bytes outside
 *   printable ASCII, and `%`), not with encodeURIComponent: a stock
 *   @grpc/grpc-js client decodes with decodeURI, which leaves `%3A` and the like
 *   in place, so callers read `amount%3A must be…` instead of the message.
 * - A request whose bytes are not a valid message (a string that is not UTF-8)
 *   is the caller's error: INVALID_ARGUMENT, not the INTERNAL the library
 *   answers for a failed parse.
 */
export function withPlainGrpcStatus(handler: (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void) {
  return (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    const writeHead = res.writeHead.bind(res) as (status: number, headers?: NodeHeaders) => http2.Http2ServerResponse;
    const addTrailers = res.addTrailers.bind(res);
    (res as { writeHead: unknown }).writeHead = (status: number, headers?: NodeHeaders) => writeHead(status, headers && fixStatus(headers));
    res.addTrailers = (trailers) => addTrailers(fixStatus(trailers as NodeHeaders) as http2.OutgoingHttpHeaders);
    handler(req, res);
  };
}

const INTERNAL = "13";
const INVALID_ARGUMENT = "3";

function fixStatus(headers: NodeHeaders): NodeHeaders {
  const raw = headers["grpc-message"];
  if (typeof raw !== "string") return headers;
  let message = decode(raw);
  let status = headers["grpc-status"];
  if (String(status) === INTERNAL && message.startsWith("parse binary:")) {
    status = INVALID_ARGUMENT;
    message = `request: is not a valid message (${message.slice("parse binary:".length).trim()})`;
  }
  return { ...headers, "grpc-status": status, "grpc-message": encodeGrpcMessage(message) };
}

function decode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The gRPC spec's Percent-Encoded: printable ASCII except `%` as is, everything else as %XX of its UTF-8 bytes. */
export function encodeGrpcMessage(message: string): string {
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

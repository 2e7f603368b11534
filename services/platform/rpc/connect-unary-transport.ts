import http2 from "node:http2";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  appendHeaders,
  Code,
  ConnectError,
  type Interceptor,
  type StreamRequest,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { errorFromJsonBytes, trailerDemux, validateResponse } from "@connectrpc/connect/protocol-connect";
import type { Http2SessionManager } from "@connectrpc/connect-node";
import { webHeaders } from "./node-headers.ts";
import { unaryCaller } from "./unary-caller.ts";
import { applyInterceptors } from "./unary-implementations.ts";

/**
 * A Connect transport whose unary calls go straight onto an HTTP/2 stream of
 * the session manager: the Connect protocol with a binary body, as
 * connect-node's transport sends it (same headers, deadline header, error
 * JSON, `trailer-` headers), without its web-standard plumbing (Headers and
 * async iterables per body, three linked abort signals, an exception built
 * on every finished call). With a handler that does nothing that plumbing
 * cost ~0.7 ms of CPU per call on the client (docs/benchmarks.md, the split
 * shape). Interceptors, deadlines, cancellation and error codes behave as
 * connect-node's do (transport failures keep its codes, so
 * isTransportFailure reads them alike); streaming calls go to `streaming`.
 */
export function createConnectUnaryTransport(options: {
  baseUrl: string;
  sessionManager: Http2SessionManager;
  interceptors: Interceptor[];
  defaultTimeoutMs?: number;
  /** Streaming calls (none today): connect-node's own transport. */
  streaming: Transport;
}): Transport {
  const { sessionManager } = options;
  const base = options.baseUrl.replace(/\/+$/, "");
  const basePath = new URL(base).pathname.replace(/\/+$/, "");
  const invoke = applyInterceptors(async (req: UnaryRequest | StreamRequest) => {
    if (req.stream) throw new ConnectError("streaming request on the unary path", Code.Internal);
    return exchange(sessionManager, `${basePath}/${req.service.typeName}/${req.method.name}`, req);
  }, options.interceptors);

  return {
    unary: unaryCaller({
      invoke,
      defaultTimeoutMs: options.defaultTimeoutMs,
      urlOf: (method) => `${base}/${method.parent.typeName}/${method.name}`,
      // As connect-node sets them before the interceptors run.
      protocolHeaders: { "content-type": "application/proto", "connect-protocol-version": "1", "user-agent": USER_AGENT },
    }),
    stream(...args) {
      return options.streaming.stream(...args);
    },
  };
}

/** One request and its answer on a stream of the session; the stream is cancelled when the call's signal aborts. */
async function exchange(sessionManager: Http2SessionManager, path: string, req: UnaryRequest): Promise<UnaryResponse> {
  const headers: http2.OutgoingHttpHeaders = {};
  req.header.forEach((value, name) => {
    headers[name] = value;
  });
  const body = toBinary(req.method.input, req.message);
  let stream: http2.ClientHttp2Stream;
  try {
    stream = await sessionManager.request("POST", path, headers, {});
  } catch (err) {
    throw fromNodeError(err);
  }
  return new Promise<UnaryResponse>((resolve, reject) => {
    let status = 0;
    let responseHeaders: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let settled = false;
    const settle = (err: ConnectError | undefined, response?: UnaryResponse) => {
      if (settled) return;
      settled = true;
      req.signal.removeEventListener("abort", cancel);
      if (err) reject(err);
      else resolve(response!);
    };
    // The call's deadline or the caller's signal (raceDeadline has already answered the caller).
    const cancel = () => {
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
      settle(ConnectError.from(req.signal.reason, Code.Canceled));
    };
    if (req.signal.aborted) return cancel();
    req.signal.addEventListener("abort", cancel, { once: true });
    stream.on("response", (h) => {
      status = Number(h[":status"] ?? 0);
      responseHeaders = h;
    });
    stream.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      sessionManager.notifyResponseByteRead(stream);
    });
    stream.on("end", () => {
      // The stream ended without an answer: the connection went away under it.
      if (status === 0) return settle(closedEarly(stream));
      try {
        settle(undefined, answer(req, status, responseHeaders, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
      } catch (err) {
        settle(ConnectError.from(err, Code.Internal));
      }
    });
    stream.on("error", (err) => {
      // As connect-node: the server answered (an error, say) before taking the whole body; its answer follows.
      if (stream.writableEnded && (err as { code?: string }).code === "ERR_STREAM_WRITE_AFTER_END") return;
      settle(fromNodeError(err));
    });
    stream.on("close", () => {
      // After "end" this is the normal close: build no error for it.
      if (!settled) settle(closedEarly(stream));
    });
    stream.end(body);
  });
}

/** The answer as connect-node's transport reads it: the message, or the error the JSON body (or the status) names. */
function answer(req: UnaryRequest, status: number, nodeHeaders: http2.IncomingHttpHeaders, body: Uint8Array): UnaryResponse {
  const [header, trailer] = trailerDemux(webHeaders(nodeHeaders));
  const { isUnaryError, unaryError } = validateResponse(req.method.methodKind, true, status, header);
  if (isUnaryError) {
    throw errorFromJsonBytes(body, appendHeaders(header, trailer), unaryError);
  }
  let message: UnaryResponse["message"];
  try {
    message = fromBinary(req.method.output, body);
  } catch (err) {
    throw new ConnectError(`parse binary: ${(err as Error).message}`, Code.Internal);
  }
  return { stream: false, service: req.service, method: req.method, header, trailer, message } as UnaryResponse;
}

/** Who calls, as connect-node's transport names itself (connect-es/<version>): ours is told apart in the services' logs. */
const USER_AGENT = "billing-rpc";
/**
 * HTTP/2 RST_STREAM codes (RFC 9113 §7) and what connect-node reports for each. This and fromNodeError copy
 * connect-node's node-error.js, which its package does not export.
 */
const RESET_CODES: Record<number, [string, Code]> = {
  0x1: ["PROTOCOL_ERROR", Code.Internal],
  0x2: ["INTERNAL_ERROR", Code.Internal],
  0x3: ["FLOW_CONTROL_ERROR", Code.Internal],
  0x4: ["SETTINGS_TIMEOUT", Code.Internal],
  0x6: ["FRAME_SIZE_ERROR", Code.Internal],
  0x7: ["REFUSED_STREAM", Code.Unavailable],
  0x8: ["CANCEL", Code.Canceled],
  0x9: ["COMPRESSION_ERROR", Code.Internal],
  0xa: ["CONNECT_ERROR", Code.Internal],
  0xb: ["ENHANCE_YOUR_CALM", Code.ResourceExhausted],
  0xc: ["INADEQUATE_SECURITY", Code.PermissionDenied],
  0xd: ["HTTP_1_1_REQUIRED", Code.PermissionDenied],
};

/** A stream that closed before its answer was read: its reset code's error, or Unavailable. */
function closedEarly(stream: http2.ClientHttp2Stream): ConnectError {
  return fromResetCode(stream.rstCode) ?? new ConnectError("http/2 stream closed before the answer", Code.Unavailable);
}

/** A reset stream as connect-node reports it (connectErrorFromH2ResetCode: same codes, same text). */
function fromResetCode(rstCode: number | undefined): ConnectError | undefined {
  const known = rstCode === undefined ? undefined : RESET_CODES[rstCode];
  if (!known) return undefined;
  return new ConnectError(`http/2 stream closed with error code ${known[0]} (0x${rstCode!.toString(16)})`, known[1]);
}

/** A Node error on the way as connect-node reports it (connectErrorFromNodeReason: same codes), the error as its cause. */
function fromNodeError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const codes = new Set<string>();
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") codes.add(code);
  }
  const has = (...names: string[]) => names.some((n) => codes.has(n));
  const code = has("ERR_STREAM_WRITE_AFTER_END", "ERR_STREAM_DESTROYED", "ERR_HTTP2_INVALID_STREAM", "ECONNRESET")
    ? Code.Aborted
    : has("ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED")
      ? Code.Unavailable
      : Code.Internal;
  const wrapped = ConnectError.from(err, code);
  if (wrapped !== err) wrapped.cause = err;
  return wrapped;
}

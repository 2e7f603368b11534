import http2 from "node:http2";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type ConnectRouter, type Interceptor, type UnaryRequest } from "@connectrpc/connect";
import { mergeNonProtocolHeaders } from "@connectrpc/connect/protocol";
import { codeToHttpStatus, errorToJsonBytes, parseTimeout, trailerMux } from "@connectrpc/connect/protocol-connect";
import type { Logger } from "../logger.ts";
import { deadlineExceeded, TIMEOUT_HEADER } from "./call-deadline.ts";
import { webHeaders } from "./node-headers.ts";
import { collectMethods, runUnary, type UnarySpec } from "./unary-implementations.ts";

type Serve = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => boolean;

/**
 * The services port's path for the calls our own clients make: a unary call in
 * the Connect protocol with a binary body (`POST /pkg.Service/Method`,
 * `application/proto`, no compression). It reads the body, decodes it, runs the
 * server interceptors and the implementation (runUnary, the chain the in-process
 * transport runs) and writes the answer as the Connect protocol says: 200 and
 * the binary message, or the code's HTTP status and the error as JSON, the
 * handler's trailers as `trailer-` headers.
 *
 * Why: connect-node's handler turns each request into web-standard objects
 * (Headers, async iterables, abort signals linked three ways) and back; with a
 * handler that does nothing, a Connect hop cost ~0.6 ms more CPU on the server
 * than a bare HTTP/2 one (docs/benchmarks.md, the split shape). Everything else
 * (gRPC, Connect JSON, GET, compression, a malformed timeout, unknown paths)
 * returns false and goes to connect-node's handler, so any Connect or gRPC client
 * still gets the full protocol.
 */
export function connectUnaryFastPath(routes: (router: ConnectRouter) => void, interceptors: Interceptor[], logger?: Pick<Logger, "error">): Serve {
  const methods = new Map<string, UnarySpec>();
  for (const [key, spec] of collectMethods(routes)) if (spec.kind === "unary") methods.set(`/${key}`, spec);
  return (req, res) => {
    if (req.method !== "POST") return false;
    const headers = req.headers;
    if (headers["content-type"] !== "application/proto") return false;
    const encoding = headers["content-encoding"];
    if (encoding !== undefined && encoding !== "identity") return false;
    const spec = methods.get(req.url);
    if (!spec) return false;
    const timeoutHeader = headers[TIMEOUT_HEADER];
    let timeoutMs: number | undefined;
    if (timeoutHeader !== undefined) {
      // A timeout the protocol refuses gets connect-node's own answer.
      const parsed = parseTimeout(typeof timeoutHeader === "string" ? timeoutHeader : String(timeoutHeader), Number.MAX_SAFE_INTEGER);
      if (parsed.error) return false;
      timeoutMs = parsed.timeoutMs;
    }
    serve(spec, req, res, interceptors, timeoutMs).catch((err: unknown) => {
      // Only writing the answer can fail here (a header HTTP/2 forbids, say): reset the stream, so the caller
      // reads a transport failure at once instead of waiting for its deadline, and keep the process up.
      logger?.error({ err: (err as Error).message, method: req.url }, "RPC answer could not be written");
      if (!res.stream.destroyed) res.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
    return true;
  };
}

/** The reason the handler's signal is aborted with once its call is answered (made once: no exception per call). */
const CALL_ENDED = new ConnectError("the call has ended", Code.Canceled);

async function serve(
  spec: UnarySpec,
  req: http2.Http2ServerRequest,
  res: http2.Http2ServerResponse,
  interceptors: Interceptor[],
  timeoutMs: number | undefined,
): Promise<void> {
  const responseHeader = new Headers({ "content-type": "application/proto" });
  const responseTrailer = new Headers();
  // The handler's signal, as Connect's handler has it: aborted when the deadline passes, the caller goes away, or
  // the call is answered (with its error, if it failed).
  const controller = new AbortController();
  const deadlineAt = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  if (timeoutMs === 0) controller.abort(deadlineExceeded());
  else if (timeoutMs !== undefined) timer = setTimeout(() => controller.abort(deadlineExceeded()), timeoutMs);
  let answered = false;
  req.stream.once("close", () => {
    if (!answered) controller.abort(new ConnectError("the caller went away", Code.Canceled));
  });
  let status = 200;
  let body: Uint8Array;
  try {
    const bytes = await readBody(req);
    let message: UnaryRequest["message"];
    try {
      message = fromBinary(spec.method.input, bytes);
    } catch (err) {
      throw new ConnectError(`request: is not a valid message (${(err as Error).message})`, Code.InvalidArgument);
    }
    const response = await runUnary(
      spec,
      {
        stream: false,
        service: spec.method.parent,
        method: spec.method,
        requestMethod: "POST",
        url: `http://${req.authority}${req.url}`,
        signal: controller.signal,
        header: webHeaders(req.headers),
        contextValues: createContextValues(),
        message,
      },
      interceptors,
      { protocolName: "connect", deadlineAt, responseHeader, responseTrailer },
    );
    body = toBinary(spec.method.output, response.message);
  } catch (err) {
    const error = err instanceof ConnectError ? err : new ConnectError("internal error", Code.Internal, undefined, undefined, err);
    controller.abort(error);
    status = codeToHttpStatus(error.code);
    responseHeader.set("content-type", "application/json");
    if (!error.isWireError) mergeNonProtocolHeaders(responseHeader, error.metadata);
    body = errorToJsonBytes(error, {});
  } finally {
    answered = true;
    clearTimeout(timer);
    if (!controller.signal.aborted) controller.abort(CALL_ENDED);
  }
  if (res.stream.destroyed) return;
  const out: http2.OutgoingHttpHeaders = { "content-length": body.byteLength };
  trailerMux(responseHeader, responseTrailer).forEach((value, name) => {
    if (name !== "content-length") out[name] = value;
  });
  res.writeHead(status, out);
  res.end(body);
}

function readBody(req: http2.Http2ServerRequest): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.once("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once("error", reject);
    req.once("aborted", () => reject(new ConnectError("the caller went away", Code.Canceled)));
  });
}

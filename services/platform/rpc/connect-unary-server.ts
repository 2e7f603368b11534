import type http2 from "node:http2";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type ConnectRouter, type Interceptor, type MethodImplSpec, type UnaryRequest } from "@connectrpc/connect";
import { mergeNonProtocolHeaders } from "@connectrpc/connect/protocol";
import { codeToHttpStatus, errorToJsonBytes, trailerMux } from "@connectrpc/connect/protocol-connect";
import { collectMethods, runUnary } from "./unary-implementations.ts";

type Serve = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => boolean;
type UnarySpec = Extract<MethodImplSpec, { kind: "unary" }>;

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
export function connectUnaryFastPath(routes: (router: ConnectRouter) => void, interceptors: Interceptor[]): Serve {
  const methods = new Map<string, UnarySpec>();
  for (const [key, spec] of collectMethods(routes)) if (spec.kind === "unary") methods.set(`/${key}`, spec);
  return (req, res) => {
    if (req.method !== "POST") return false;
    const headers = req.headers;
    if (headers["content-type"] !== "application/proto") return false;
    const encoding = headers["content-encoding"];
    if (encoding !== undefined && encoding !== "identity") return false;
    const timeout = headers["connect-timeout-ms"];
    if (timeout !== undefined && (typeof timeout !== "string" || !TIMEOUT.test(timeout))) return false;
    const spec = methods.get(req.url);
    if (!spec) return false;
    void serve(spec, req, res, interceptors, timeout === undefined ? undefined : Number(timeout));
    return true;
  };
}

/** The Connect protocol's timeout: up to 10 digits of milliseconds (anything else gets the library's error). */
const TIMEOUT = /^\d{1,10}$/;

async function serve(
  spec: UnarySpec,
  req: http2.Http2ServerRequest,
  res: http2.Http2ServerResponse,
  interceptors: Interceptor[],
  timeoutMs: number | undefined,
): Promise<void> {
  const responseHeader = new Headers({ "content-type": "application/proto" });
  const responseTrailer = new Headers();
  // The handler's signal: aborted when the deadline passes or the caller goes away, as Connect's handler does.
  const controller = new AbortController();
  const timer =
    timeoutMs === undefined ? undefined : setTimeout(() => controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)), timeoutMs);
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
    const header = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (name.charCodeAt(0) === COLON || value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) header.append(name, v);
      else header.set(name, value);
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
        header,
        contextValues: createContextValues(),
        message,
      },
      interceptors,
      { protocolName: "connect", deadlineAt: timeoutMs === undefined ? undefined : Date.now() + timeoutMs, responseHeader, responseTrailer },
    );
    body = toBinary(spec.method.output, response.message);
  } catch (err) {
    const error = err instanceof ConnectError ? err : new ConnectError("internal error", Code.Internal, undefined, undefined, err);
    status = codeToHttpStatus(error.code);
    responseHeader.set("content-type", "application/json");
    if (!error.isWireError) mergeNonProtocolHeaders(responseHeader, error.metadata);
    body = errorToJsonBytes(error, {});
  } finally {
    answered = true;
    clearTimeout(timer);
  }
  if (res.stream.destroyed) return;
  const out: http2.OutgoingHttpHeaders = { "content-length": body.byteLength };
  trailerMux(responseHeader, responseTrailer).forEach((value, name) => {
    if (name !== "content-length") out[name] = value;
  });
  res.writeHead(status, out);
  res.end(body);
}

const COLON = ":".charCodeAt(0);

function readBody(req: http2.Http2ServerRequest): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.once("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once("error", reject);
    req.once("aborted", () => reject(new ConnectError("the caller went away", Code.Canceled)));
  });
}

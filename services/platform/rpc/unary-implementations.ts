import { create, type DescService } from "@bufbuild/protobuf";
import {
  createServiceImplSpec,
  type ConnectRouter,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type StreamRequest,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";

/**
 * The server side of a unary call without Connect's HTTP machinery: the
 * request goes through the server interceptors (metrics, token check,
 * validation, error translation, audit, use-case context) into the
 * implementation. Shared by the in-process transport (all-in-one) and the
 * HTTP/2 fast path of the services port (connect-unary-server.ts), so both
 * run exactly the chain Connect's own handler runs.
 */
export type UnaryMethods = ReadonlyMap<string, MethodImplSpec>;

/** A registered implementation of a unary method: what runUnary runs (callers pick these out of collectMethods). */
export type UnarySpec = Extract<MethodImplSpec, { kind: "unary" }>;

/** The key of a method, as its Connect path reads without the leading slash: `package.Service/Method`. */
export const methodKey = (service: DescService, methodName: string) => `${service.typeName}/${methodName}`;

/** The implementations `routes` registers, by methodKey (a router that only records). */
export function collectMethods(routes: (router: ConnectRouter) => void): UnaryMethods {
  const methods = new Map<string, MethodImplSpec>();
  const recorder = {
    handlers: [],
    service(service: DescService, impl: object) {
      const spec = createServiceImplSpec(service, impl);
      for (const m of Object.values(spec.methods)) methods.set(methodKey(service, m.method.name), m);
      return recorder;
    },
    rpc(method: MethodImplSpec["method"], impl: MethodImplSpec["impl"]) {
      methods.set(methodKey(method.parent, method.name), { kind: method.methodKind, method, impl } as MethodImplSpec);
      return recorder;
    },
  };
  routes(recorder as unknown as ConnectRouter);
  return methods;
}

export interface CallSite {
  /** "in-process" or "connect": what HandlerContext.protocolName tells the handler. */
  protocolName: string;
  /** When the caller's deadline passes (Date.now() clock), if it set one. */
  deadlineAt: number | undefined;
  responseHeader: Headers;
  responseTrailer: Headers;
}

/**
 * Runs `req` (a unary request whose method is `spec`'s) through `serverInterceptors` into the implementation.
 * The response's header and trailer are `site`'s, which the handler and interceptors fill.
 */
export async function runUnary(spec: UnarySpec, req: UnaryRequest, serverInterceptors: Interceptor[], site: CallSite): Promise<UnaryResponse> {
  const { method } = spec;
  const next = applyInterceptors(async (r: UnaryRequest | StreamRequest) => {
    const context: HandlerContext = {
      method,
      service: req.service,
      signal: r.signal,
      timeoutMs: () => (site.deadlineAt === undefined ? undefined : site.deadlineAt - Date.now()),
      requestMethod: r.requestMethod,
      requestHeader: r.header,
      responseHeader: site.responseHeader,
      responseTrailer: site.responseTrailer,
      protocolName: site.protocolName,
      values: r.contextValues,
      url: r.url,
    };
    const output = await spec.impl(r.message as never, context);
    return {
      stream: false,
      service: req.service,
      method,
      header: site.responseHeader,
      trailer: site.responseTrailer,
      message: create(method.output, output as never),
    } as UnaryResponse;
  }, serverInterceptors);
  return (await next(req)) as UnaryResponse;
}

type AnyFn = Parameters<Interceptor>[0];

/** As Connect applies them: the first interceptor is the outermost. */
export function applyInterceptors(next: AnyFn, interceptors: Interceptor[]): AnyFn {
  return interceptors.reduceRight((n, interceptor) => interceptor(n), next);
}

import { performance } from "node:perf_hooks";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { SpanKind, SpanStatusCode, context, propagation, trace, type Context } from "@opentelemetry/api";
import type { BillingMetrics } from "./metrics.ts";

/** gRPC's canonical code names, indexed by code (Connect uses the same numbers). */
const CODE_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];
const rpcCodeName = (code: Code | 0): string => CODE_NAMES[code] ?? "UNKNOWN";

const headerGetter = {
  keys: (h: Headers) => [...h.keys()],
  get: (h: Headers, key: string) => h.get(key) ?? undefined,
};
const headerSetter = { set: (h: Headers, key: string, value: string) => h.set(key, value) };

const tracer = () => trace.getTracer("billing");

/**
 * Outermost server interceptor: the call's duration and code name into
 * rpc_server_call_duration_seconds and, with tracing on, a SERVER span that
 * continues the caller's W3C traceparent (HTTP/2 is not auto-instrumented).
 */
export function rpcServerObserver(metrics: BillingMetrics | undefined, tracing: boolean): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    let code: Code | 0 = 0;
    const labels = { rpc_service: req.service.typeName, rpc_method: req.method.name };
    let parent: Context | undefined;
    const span = tracing
      ? tracer().startSpan(
          `${req.service.typeName}/${req.method.name}`,
          { kind: SpanKind.SERVER, attributes: { "rpc.system": "connect_rpc", "rpc.service": labels.rpc_service, "rpc.method": labels.rpc_method } },
          (parent = propagation.extract(context.active(), req.header, headerGetter)),
        )
      : undefined;
    try {
      return span ? await context.with(trace.setSpan(parent!, span), () => next(req)) : await next(req);
    } catch (err) {
      code = ConnectError.from(err).code;
      throw err;
    } finally {
      metrics?.rpcServerDuration.observe({ ...labels, rpc_status_code: rpcCodeName(code) }, (performance.now() - started) / 1000);
      if (span) {
        span.setAttribute("rpc.response.status_code", rpcCodeName(code));
        // Client errors are the caller's; only server-side codes mark the span failed.
        if (SERVER_FAULTS.has(code)) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
    }
  };
}

const SERVER_FAULTS = new Set<Code | 0>([Code.Unknown, Code.DeadlineExceeded, Code.Unimplemented, Code.Internal, Code.Unavailable, Code.DataLoss]);

/** Client interceptor (tracing on only): a CLIENT span, and its context sent as `traceparent`. */
export function rpcClientTracer(): Interceptor {
  return (next) => async (req) => {
    const span = tracer().startSpan(`${req.service.typeName}/${req.method.name}`, {
      kind: SpanKind.CLIENT,
      attributes: { "rpc.system": "connect_rpc", "rpc.service": req.service.typeName, "rpc.method": req.method.name },
    });
    const ctx = trace.setSpan(context.active(), span);
    propagation.inject(ctx, req.header, headerSetter);
    try {
      return await context.with(ctx, () => next(req));
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  };
}

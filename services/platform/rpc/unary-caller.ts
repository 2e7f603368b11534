import { create, type DescMessage, type DescMethodUnary, type MessageInitShape } from "@bufbuild/protobuf";
import { createContextValues, type Interceptor, type Transport, type UnaryResponse } from "@connectrpc/connect";
import { callDeadline, raceDeadline, TIMEOUT_HEADER } from "./call-deadline.ts";

type AnyFn = Parameters<Interceptor>[0];

/**
 * A transport's `unary`, the caller's side both our transports share (in-process and the short network path):
 * the call's deadline as connect-node resolves it, sent in the protocol's header so the handler knows its remaining
 * time; the request as the interceptors see it; the deadline and the caller's signal raced against the call.
 */
export function unaryCaller(options: {
  /** The call through the client interceptors (applyInterceptors), to the transport's own exchange. */
  invoke: AnyFn;
  defaultTimeoutMs: number | undefined;
  /** What the request's `url` reads. */
  urlOf(method: DescMethodUnary): string;
  /** Headers the protocol sets before the interceptors run. */
  protocolHeaders?: Readonly<Record<string, string>>;
}): Transport["unary"] {
  return <I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: ConstructorParameters<typeof Headers>[0] | undefined,
    input: MessageInitShape<I>,
    contextValues?: ReturnType<typeof createContextValues>,
  ): Promise<UnaryResponse<I, O>> => {
    const deadline = callDeadline(timeoutMs, options.defaultTimeoutMs);
    const controller = new AbortController();
    const requestHeader = new Headers(header);
    for (const [name, value] of Object.entries(options.protocolHeaders ?? {})) requestHeader.set(name, value);
    if (deadline) requestHeader.set(TIMEOUT_HEADER, String(deadline));
    const call = options.invoke({
      stream: false,
      service: method.parent,
      method,
      requestMethod: "POST",
      url: options.urlOf(method as DescMethodUnary),
      signal: controller.signal,
      header: requestHeader,
      contextValues: contextValues ?? createContextValues(),
      message: create(method.input, input),
    }) as Promise<UnaryResponse<I, O>>;
    if (!deadline && !signal) return call;
    return raceDeadline(call, controller, deadline, signal);
  };
}

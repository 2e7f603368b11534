import { createRouterTransport, type ConnectRouter, type Interceptor, type Transport } from "@connectrpc/connect";
import { attachServiceToken } from "./auth.ts";

/**
 * The transport for calling services that run in this very process: Connect's
 * router transport hands the request to the same routes the HTTP/2 server
 * serves, through the same server interceptors (service token check, domain
 * error translation), without a socket, HTTP/2 framing or a second event-loop
 * turn per frame. Messages are still serialized (binary), so caller and
 * service never share mutable objects and behave exactly as over the network.
 * Built once per process by the composition root (cli/system.ts); services in
 * other processes keep the network path (RpcClients picks per base URL).
 */
export function createInProcessTransport(
  routes: (router: ConnectRouter) => void,
  serverInterceptors: Interceptor[],
  options: { token: string; clientInterceptors?: Interceptor[]; defaultTimeoutMs?: number },
): Transport {
  return createRouterTransport(routes, {
    router: { interceptors: serverInterceptors },
    transport: {
      useBinaryFormat: true,
      // The same deadline as a network call (RPC_TIMEOUT_MS): in-process is no reason to wait forever.
      ...(options.defaultTimeoutMs ? { defaultTimeoutMs: options.defaultTimeoutMs } : {}),
      interceptors: [attachServiceToken(options.token), ...(options.clientInterceptors ?? [])],
    },
  });
}

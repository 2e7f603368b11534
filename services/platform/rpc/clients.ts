import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type ConnectRouter, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { attachServiceToken } from "./auth.ts";
import { GuardedSessionManager } from "./guarded-session-manager.ts";
import { createInProcessTransport } from "./in-process.ts";
import { createConnectUnaryTransport } from "./connect-unary-transport.ts";
import { propagateCallContext } from "../audit/call-headers.ts";

/**
 * Connect clients over HTTP/2, one session manager per base URL, all carrying
 * the service token. close() aborts the sessions so processes exit promptly.
 * A base URL served by this very process (serveInProcess) is called through
 * the in-process router transport instead: same routes, same interceptors,
 * no socket. Clients are cached per (service, base URL): build once, reuse.
 */
export class RpcClients {
  readonly #sessions = new Map<string, GuardedSessionManager>();
  readonly #token: string;
  readonly #interceptors: Interceptor[];
  readonly #timeoutMs: number | undefined;
  readonly #inProcess = new Map<string, Transport>();
  readonly #clients = new Map<string, Client<any>>();

  /** `timeoutMs`: default deadline of every call (RPC_TIMEOUT_MS); a call's own timeoutMs wins. */
  constructor(token: string, interceptors: Interceptor[] = [], options: { timeoutMs?: number } = {}) {
    this.#token = token;
    // Who is acting travels with every call (the services audit it).
    this.#interceptors = [propagateCallContext(), ...interceptors];
    this.#timeoutMs = options.timeoutMs;
  }

  /** Calls to `baseUrl` go to these routes in this process (the composition root says so once). */
  serveInProcess(baseUrl: string, routes: (router: ConnectRouter) => void, serverInterceptors: Interceptor[]): void {
    this.#inProcess.set(
      baseUrl,
      createInProcessTransport(routes, serverInterceptors, { token: this.#token, clientInterceptors: this.#interceptors, defaultTimeoutMs: this.#timeoutMs }),
    );
    for (const key of this.#clients.keys()) if (key.endsWith(` ${baseUrl}`)) this.#clients.delete(key);
  }

  client<S extends DescService>(service: S, baseUrl: string): Client<S> {
    const key = `${service.typeName} ${baseUrl}`;
    const cached = this.#clients.get(key);
    if (cached) return cached as Client<S>;
    const local = this.#inProcess.get(baseUrl);
    const made = createClient(service, local ?? this.#networkTransport(baseUrl));
    this.#clients.set(key, made);
    return made;
  }

  #networkTransport(baseUrl: string): Transport {
    let sessionManager = this.#sessions.get(baseUrl);
    if (!sessionManager) {
      sessionManager = new GuardedSessionManager(baseUrl, { pingIntervalMs: 30_000, idleConnectionTimeoutMs: 60_000 });
      this.#sessions.set(baseUrl, sessionManager);
    }
    const interceptors = [attachServiceToken(this.#token), ...this.#interceptors];
    const defaultTimeoutMs = this.#timeoutMs || undefined;
    // Unary calls (all of ours) on the short path; streaming ones through connect-node's transport.
    return createConnectUnaryTransport({
      baseUrl,
      sessionManager,
      interceptors,
      ...(defaultTimeoutMs ? { defaultTimeoutMs } : {}),
      streaming: createConnectTransport({
        baseUrl,
        httpVersion: "2",
        useBinaryFormat: true,
        // Uncompressed both ways: inside the deployment the bytes are cheap and the CPU is not. Connect's default
        // (gzip or brotli accepted) had the services gzip every answer above 1 KiB and the gateway inflate it:
        // 4 to 5 % of each process's CPU under the split-roles read load.
        acceptCompression: [],
        sessionManager,
        ...(defaultTimeoutMs ? { defaultTimeoutMs } : {}),
        interceptors,
      }),
    });
  }

  close(): void {
    this.#clients.clear();
    this.#inProcess.clear();
    for (const s of this.#sessions.values()) s.abort();
    this.#sessions.clear();
  }
}

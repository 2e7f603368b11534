import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { attachServiceToken } from "./auth.ts";
import { GuardedSessionManager } from "./guarded-session-manager.ts";

/**
 * Connect clients over HTTP/2, one session manager per base URL, all carrying
 * the service token. close() aborts the sessions so processes exit promptly.
 */
export class RpcClients {
  readonly #sessions = new Map<string, GuardedSessionManager>();
  readonly #token: string;
  readonly #interceptors: Interceptor[];
  readonly #timeoutMs: number | undefined;

  /** `timeoutMs`: default deadline of every call (RPC_TIMEOUT_MS); a call's own timeoutMs wins. */
  constructor(token: string, interceptors: Interceptor[] = [], options: { timeoutMs?: number } = {}) {
    this.#token = token;
    this.#interceptors = interceptors;
    this.#timeoutMs = options.timeoutMs;
  }

  client<S extends DescService>(service: S, baseUrl: string): Client<S> {
    let sessionManager = this.#sessions.get(baseUrl);
    if (!sessionManager) {
      sessionManager = new GuardedSessionManager(baseUrl, { pingIntervalMs: 30_000, idleConnectionTimeoutMs: 60_000 });
      this.#sessions.set(baseUrl, sessionManager);
    }
    const transport = createConnectTransport({
      baseUrl,
      httpVersion: "2",
      useBinaryFormat: true,
      sessionManager,
      ...(this.#timeoutMs ? { defaultTimeoutMs: this.#timeoutMs } : {}),
      interceptors: [attachServiceToken(this.#token), ...this.#interceptors],
    });
    return createClient(service, transport);
  }

  close(): void {
    for (const s of this.#sessions.values()) s.abort();
    this.#sessions.clear();
  }
}

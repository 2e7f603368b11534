import type http2 from "node:http2";
import { Http2SessionManager } from "@connectrpc/connect-node";

/**
 * connect-node's Http2SessionManager removes its "error" listener from a
 * session before Node emits the error it asked for: when the server sends
 * GOAWAY to an idle session (a services process restarting or shutting down)
 * the session is destroyed with an error that then has no listener, and an
 * EventEmitter "error" without a listener kills the process. This manager
 * gives every session it hands out one listener that does nothing (through
 * the public request(), so only our own transports are touched, never the
 * process-wide http2 module): the manager still sees the errors it listens
 * for, and reconnects on the next call.
 *
 * Works around https://github.com/connectrpc/connect-es/issues/1768; delete
 * this class (and use Http2SessionManager) once a connect-node release fixes it.
 */
export class GuardedSessionManager extends Http2SessionManager {
  readonly #guarded = new WeakSet<http2.Http2Session>();

  override async request(
    method: string,
    path: string,
    headers: http2.OutgoingHttpHeaders,
    options: Omit<http2.ClientSessionRequestOptions, "signal">,
  ): Promise<http2.ClientHttp2Stream> {
    const stream = await super.request(method, path, headers, options);
    const session = stream.session;
    if (session && !this.#guarded.has(session)) {
      this.#guarded.add(session);
      session.on("error", ignore);
    }
    return stream;
  }
}

function ignore(): void {}

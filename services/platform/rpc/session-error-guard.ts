import http2 from "node:http2";
import { syncBuiltinESMExports } from "node:module";

/**
 * connect-node's Http2SessionManager removes its "error" listener from a
 * session before Node emits the error it asked for: when the server sends
 * GOAWAY to an idle session (a services process restarting or shutting down)
 * it destroys the session with a Canceled error that then has no listener,
 * and an EventEmitter "error" without a listener kills the process. Every
 * client session therefore gets one listener that does nothing: the manager
 * still sees the errors it listens for, and it reconnects on the next call.
 * syncBuiltinESMExports() makes the `import * as http2` in connect-node see
 * the wrapped function.
 */
const GUARDED = Symbol.for("billing.http2.sessionErrorGuard");

export function guardClientSessionErrors(): void {
  const target = http2 as typeof http2 & { [GUARDED]?: true };
  if (target[GUARDED]) return;
  const connect = http2.connect;
  target.connect = ((...args: Parameters<typeof http2.connect>) => {
    const session = connect(...args);
    session.on("error", () => {});
    return session;
  }) as typeof http2.connect;
  target[GUARDED] = true;
  syncBuiltinESMExports();
}

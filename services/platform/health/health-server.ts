import http from "node:http";
import type http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { runChecks, type ReadinessChecks } from "./readiness.ts";

/** Answers at most this fast when a dependency hangs. */
export const READINESS_TIMEOUT_MS = 2_000;

type Req = Pick<http.IncomingMessage | http2.Http2ServerRequest, "url" | "method">;
/** The part of a Node response (HTTP/1 or HTTP/2 compatibility API) a probe uses. */
interface Res {
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  end(text: string): unknown;
}

/**
 * GET /healthz (alive: 200) and GET /readyz (200 when every check passes,
 * else 503 naming the failing ones). Returns false for any other request.
 */
export async function answerProbe(req: Req, res: Res, checks: ReadinessChecks): Promise<boolean> {
  const path = (req.url ?? "").split("?")[0];
  if (req.method !== "GET" || (path !== "/healthz" && path !== "/readyz")) return false;
  let status = 200;
  let body: unknown = { status: "ok" };
  if (path === "/readyz") {
    const result = await runChecks(checks, READINESS_TIMEOUT_MS);
    status = result.ready ? 200 : 503;
    body = { status: result.ready ? "ready" : "not_ready", checks: result.checks };
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
  return true;
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/** A workers process has no API: this tiny server is its probe endpoint (HEALTH_PORT). */
export async function startHealthServer(port: number, checks: ReadinessChecks): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    void answerProbe(req, res, checks).then((answered) => {
      if (!answered) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: "NOT_FOUND", message: "only /healthz and /readyz" } }));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "0.0.0.0", resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

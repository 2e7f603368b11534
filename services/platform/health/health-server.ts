import type http from "node:http";
import type http2 from "node:http2";
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

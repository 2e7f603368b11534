import http from "node:http";
import type { AddressInfo } from "node:net";
import type { BillingMetrics } from "./metrics.ts";

/** The process's readiness: each named check "ok" or a reason (bounded by the caller). */
type Readiness = () => Promise<Record<string, string>>;

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * The operations port of every role, apart from the public one: GET /metrics
 * (Prometheus text), /healthz (the process answers) and /readyz (its
 * dependencies answer: 200, or 503 naming what is down).
 */
export async function startMetricsServer(metrics: BillingMetrics, port: number, readiness: Readiness, host = "0.0.0.0"): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
      res.end(req.method === "HEAD" ? undefined : body);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, "application/json", JSON.stringify({ error: "METHOD_NOT_ALLOWED" }));
    if (path === "/metrics") {
      metrics.scrape().then(
        (text) => send(200, metrics.registry.contentType, text),
        () => send(500, "text/plain", "metrics collection failed\n"),
      );
    } else if (path === "/healthz") {
      send(200, "application/json", JSON.stringify({ status: "ok" }));
    } else if (path === "/readyz") {
      readiness().then(
        (checks) => {
          const ready = Object.values(checks).every((v) => v === "ok");
          send(ready ? 200 : 503, "application/json", JSON.stringify({ status: ready ? "ready" : "not_ready", checks }));
        },
        () => send(503, "application/json", JSON.stringify({ status: "not_ready" })),
      );
    } else {
      send(404, "application/json", JSON.stringify({ error: "NOT_FOUND" }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

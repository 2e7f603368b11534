import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { withPlainGrpcStatus } from "./grpc-status-text.ts";
import { connectUnaryFastPath } from "./connect-unary-server.ts";
import type { Logger } from "../logger.ts";
import { answerProbe } from "../health/health-server.ts";
import type { ReadinessChecks } from "../health/readiness.ts";

interface ServicesServer {
  listen(port: number, host?: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * An unstarted HTTP/2 (h2c) server that speaks gRPC and Connect for the given
 * routes. Open sessions are tracked because http2's close() waits for them.
 */
export function createServicesServer(
  routes: (router: ConnectRouter) => void,
  interceptors: Interceptor[],
  readiness: ReadinessChecks = {},
  logger?: Pick<Logger, "error">,
): ServicesServer {
  // GET /healthz and /readyz share the RPC port (unauthenticated, no data): what the gateway and probes ask.
  const handler = connectNodeAdapter({
    routes,
    grpc: true,
    connect: true,
    grpcWeb: false,
    interceptors,
    fallback: (req, res) => {
      void answerProbe(req, res, readiness).then((answered) => {
        if (!answered) {
          res.writeHead(404);
          res.end();
        }
      });
    },
  });
  // Our own clients' calls (unary, Connect, binary) take the short path; every other request gets connect-node's.
  const fastPath = connectUnaryFastPath(routes, interceptors, logger);
  const fullProtocol = withPlainGrpcStatus(handler);
  const server = http2.createServer((req, res) => {
    if (!fastPath(req, res)) fullProtocol(req, res);
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  return {
    listen: (port, host = "127.0.0.1") =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
      }),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // Let in-flight streams finish, then stop idle sessions.
        for (const s of sessions) s.close();
      }),
  };
}

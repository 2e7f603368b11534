import type { Interceptor } from "@connectrpc/connect";
import type { ServiceDeps } from "./platform/service-deps.ts";
import { createServicesServer } from "./platform/rpc/server.ts";
import { requireServiceToken } from "./platform/rpc/auth.ts";
import { errorInterceptor } from "./platform/rpc/errors.ts";
import { serviceRoutes } from "./routes.ts";

export interface RunningServices {
  port: number;
  /** What the port serves, for callers in this process (RpcClients.serveInProcess). */
  routes: ReturnType<typeof serviceRoutes>;
  interceptors: Interceptor[];
  close(): Promise<void>;
}

/** Serves the configured Connect services (gRPC + Connect, h2c) on one port. */
export async function startServices(
  deps: ServiceDeps,
  port: number,
): Promise<RunningServices> {
  const routes = serviceRoutes(deps, deps.config.services);
  const interceptors = [requireServiceToken(deps.config.internalApiToken), errorInterceptor(deps.logger)];
  const server = createServicesServer(routes, interceptors);
  const bound = await server.listen(port);
  deps.logger.info({ port: bound, services: deps.config.services }, "services listening");
  return { port: bound, routes, interceptors, close: () => server.close() };
}

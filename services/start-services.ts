import type { Interceptor } from "@connectrpc/connect";
import type { ServiceDeps } from "./platform/service-deps.ts";
import { createServicesServer } from "./platform/rpc/server.ts";
import { requireServiceToken } from "./platform/rpc/auth.ts";
import { errorInterceptor } from "./platform/rpc/errors.ts";
import { serviceRoutes } from "./routes.ts";
import { validateRequests } from "./platform/rpc/validate-request.ts";
import { merchantExistence } from "./merchants/merchant-exists.ts";
import { postgresCheck, redisCheck } from "./platform/health/readiness.ts";
import { rpcServerObserver } from "./platform/observability/rpc-observers.ts";
import { auditCalls } from "./platform/audit/call-headers.ts";
import { recordAuditOnCommit } from "./platform/audit/audit-subscriber.ts";
import { provideUseCaseContext } from "./platform/rpc/use-case-context.ts";

export interface RunningServices {
  port: number;
  /** What the port serves, for callers in this process (RpcClients.serveInProcess). */
  routes: ReturnType<typeof serviceRoutes>;
  interceptors: Interceptor[];
  close(): Promise<void>;
}

/** Serves the configured Connect services (gRPC + Connect, h2c) on one port. */
export async function startServices(deps: ServiceDeps, port: number): Promise<RunningServices> {
  const routes = serviceRoutes(deps, deps.config.services);
  const interceptors = [
    rpcServerObserver(deps.metrics, deps.config.tracing),
    requireServiceToken(deps.config.internalApiToken),
    errorInterceptor(deps.logger),
    validateRequests({ merchantExists: merchantExistence(deps.orm) }),
    // Innermost: only a call that passed the checks can owe an audit entry.
    auditCalls(deps.orm, deps.logger),
    // The handler's entity manager and clock (useCaseContext(call)), made only for a call that passed the checks.
    provideUseCaseContext(deps),
  ];
  recordAuditOnCommit(deps.orm);
  const server = createServicesServer(routes, interceptors, { postgres: postgresCheck(deps.orm), redis: redisCheck(deps.queues.connection) }, deps.logger);
  const bound = await server.listen(port, deps.config.servicesHost);
  deps.logger.info({ port: bound, services: deps.config.services }, "services listening");
  return { port: bound, routes, interceptors, close: () => server.close() };
}

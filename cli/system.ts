import type { Config, ServiceName, WorkerGroup } from "../services/platform/config.ts";
import type { Logger } from "../services/platform/logger.ts";
import type { Orm } from "../services/platform/database/orm.ts";
import { openDatabase } from "./database.ts";
import { createClock, type ManagedClock } from "../services/platform/clock-factory.ts";
import { Queues } from "../services/platform/queue/queues.ts";
import { RpcClients } from "../services/platform/rpc/clients.ts";
import { startServices, type RunningServices } from "../services/start-services.ts";
import { startGateway, type RunningGateway } from "../gateway/start-gateway.ts";
import { startWorkers, type RunningWorkers } from "../workers/start-workers.ts";
import type { AnyHandler } from "../services/platform/queue/define-job.ts";
import { buildJobRegistry } from "../workers/registry.ts";
import { createObservability } from "./observability.ts";
import type { BillingMetrics } from "../services/platform/observability/metrics.ts";
import { pokeAfterCommit } from "../services/platform/database/commit-pokes.ts";
import { checkSessionBounds } from "../services/platform/database/session-bounds.ts";
import { publishPoke } from "../services/platform/queue/pokes.ts";
import { EVENTS_COMMITTED_POKE } from "../services/events/relay-poke.ts";

export interface SystemParts {
  services: readonly ServiceName[];
  gateway: boolean;
  workerGroups: readonly WorkerGroup[];
  /** Ports to bind; 0 picks a free one (tests). */
  gatewayPort?: number;
  servicesPort?: number;
  /** Only these handlers (tests): the registry is checked against their own kinds. */
  jobs?: readonly AnyHandler[];
  /** Operations port (/metrics, /healthz, /readyz): 0 picks a free one (tests); default METRICS_PORT, where 0 serves nothing. */
  metricsPort?: number;
}

export interface RunningSystem {
  config: Config;
  orm: Orm | undefined;
  clock: ManagedClock | undefined;
  queues: Queues | undefined;
  gatewayPort: number | undefined;
  servicesPort: number | undefined;
  metricsPort: number | undefined;
  metrics: BillingMetrics | undefined;
  close(): Promise<void>;
}

/**
 * Composition root: starts any mix of roles in this process. When services
 * run here, the gateway and workers call them on the port actually bound.
 * close() stops intake first (gateway), then finishes jobs, then RPC, then pools.
 */
export async function startSystem(baseConfig: Config, logger: Logger, parts: SystemParts): Promise<RunningSystem> {
  let config = baseConfig;
  const needsDb = parts.services.length > 0 || parts.workerGroups.length > 0;
  const orm = needsDb
    ? await openDatabase(config.databaseUrl, config.dbPoolMax, {
        statementTimeoutMs: config.dbStatementTimeoutMs,
        connectTimeoutMs: config.dbConnectTimeoutMs,
        preparedStatements: config.dbPreparedStatements,
      })
    : undefined;
  const clock = orm ? await createClock(config, orm) : undefined;
  const observability = await createObservability(config, logger, parts.metricsPort);
  // Not awaited: behind PgBouncer the check can wait up to 120 s for a session, and /healthz must answer meanwhile.
  // It only logs what it finds and swallows its own errors.
  if (orm) void checkSessionBounds(orm, config.dbStatementTimeoutMs, logger);
  const queues = needsDb ? new Queues(config, config.queuePrefix, logger, observability.telemetry) : undefined;
  const rpc = new RpcClients(config.internalApiToken, observability.rpcClientInterceptors, { timeoutMs: config.rpcTimeoutMs });
  const metrics = observability.observe({ orm, clock: clock?.clock, queues, workerGroups: parts.workerGroups });
  // Committed events reach the relay at once (its sweep stays the safety net).
  if (orm && queues) pokeAfterCommit(orm, "Event", () => publishPoke(queues, EVENTS_COMMITTED_POKE));

  let services: RunningServices | undefined;
  let gateway: RunningGateway | undefined;
  let workers: RunningWorkers | undefined;
  try {
    if (parts.services.length > 0) {
      config = { ...config, services: parts.services };
      const serviceDeps = { config, logger, orm: orm!, clock: clock!.clock, queues: queues!, rpc, metrics };
      services = await startServices(serviceDeps, parts.servicesPort ?? config.servicesPort);
      const local = `http://127.0.0.1:${services.port}`;
      const urls = { ...config.serviceUrls };
      for (const name of parts.services) urls[name] = local;
      config = Object.freeze({ ...config, serviceUrls: Object.freeze(urls) });
      // Services calling each other (subscriptions → wallet) must use the port actually bound.
      serviceDeps.config = config;
      // Callers in this process (gateway, workers, services) skip the network (RPC_IN_PROCESS).
      if (config.rpcInProcess) rpc.serveInProcess(local, services.routes, services.interceptors);
    }
    if (parts.workerGroups.includes("emails")) {
      // Said once, at start: the emails group runs either way (with SMTP off it only marks events collected).
      if (config.smtpUrl) logger.info({ from: config.emailFrom, smtp: new URL(config.smtpUrl).host }, "customer emails are on");
      else logger.info("customer emails are off: SMTP_URL is not set");
    }
    if (parts.workerGroups.length > 0) {
      workers = await startWorkers(
        { config, logger, orm: orm!, clock: clock!.clock, queues: queues!, rpc, metrics },
        parts.workerGroups,
        parts.jobs
          ? buildJobRegistry(
              parts.jobs,
              parts.jobs.map((j) => j.kind),
            )
          : buildJobRegistry(),
      );
    }
    if (parts.gateway) gateway = await startGateway(config, logger, parts.gatewayPort ?? config.port, { metrics, rpc });
    if (gateway) observability.addReadiness(gateway.readiness);
    await observability.listen();
  } catch (err) {
    await closeAll();
    throw err;
  }

  async function closeAll() {
    await observability.close();
    await gateway?.close();
    await workers?.close();
    await services?.close();
    rpc.close();
    await queues?.close();
    clock?.stop();
    await orm?.close();
  }

  return {
    config,
    orm,
    clock,
    queues,
    gatewayPort: gateway?.port,
    servicesPort: services?.port,
    metricsPort: observability.port(),
    metrics,
    close: closeAll,
  };
}

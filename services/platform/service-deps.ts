import type { Orm } from "./database/orm.ts";
import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { Logger } from "./logger.ts";
import type { UseCaseContext } from "./use-case.ts";
import type { Queues } from "./queue/queues.ts";
import type { RpcClients } from "./rpc/clients.ts";
import type { BillingMetrics } from "./observability/metrics.ts";

/** What an RPC adapter needs; passed in by the process that hosts it. */
export interface ServiceDeps {
  orm: Orm;
  clock: Clock;
  config: Config;
  logger: Logger;
  /** Producers for the jobs that make scheduled work prompt (after commit only). */
  queues: Queues;
  /** Connect clients for calling other services (read URLs from config.serviceUrls at call time). */
  rpc: RpcClients;
  /** The process's metrics registry (absent in tools and unit tests). */
  metrics?: BillingMetrics | undefined;
}

/** A use-case context with its own entity manager: one per RPC call or job. */
export function contextFor(deps: { orm: Orm; clock: Clock }): UseCaseContext {
  return { em: deps.orm.em.fork(), clock: deps.clock };
}

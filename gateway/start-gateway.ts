import { AuditService } from "../proto/gen/billing/audit/v1/audit_pb.ts";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connectRedis, type RedisConnection } from "../services/platform/redis.ts";
import type { Config } from "../services/platform/config.ts";
import type { Logger } from "../services/platform/logger.ts";
import { RpcClients } from "../services/platform/rpc/clients.ts";
import { CatalogService } from "../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { MerchantService } from "../proto/gen/billing/merchants/v1/merchants_pb.ts";
import { MembersService } from "../proto/gen/billing/merchants/v1/members_pb.ts";
import { SandboxService } from "../proto/gen/billing/sandbox/v1/sandbox_pb.ts";
import { WalletService } from "../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { SubscriptionsService } from "../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { PricingService } from "../proto/gen/billing/subscriptions/v1/pricing_pb.ts";
import { RefundsService } from "../proto/gen/billing/subscriptions/v1/refunds_pb.ts";
import { OrdersService } from "../proto/gen/billing/orders/v1/orders_pb.ts";
import { PayoutsService } from "../proto/gen/billing/payouts/v1/payouts_pb.ts";
import { EventsService } from "../proto/gen/billing/events/v1/events_pb.ts";
import { createGatewayApp } from "./app.ts";
import type { GatewayClients, GatewayDeps } from "./deps.ts";
import { outcomeUnknownMs, redisIdempotencyStore } from "./idempotency.ts";
import { ApiKeyCache, listenForRevocations } from "./api-key-cache.ts";
import { hostedPages } from "./pages/index.ts";
import { redisRateLimiter } from "./rate-limit/redis-rate-limiter.ts";
import { redisCheck, runChecks, serviceCheck, type ReadinessChecks } from "../services/platform/health/readiness.ts";
import { READINESS_TIMEOUT_MS } from "../services/platform/health/health-server.ts";
import type { BillingMetrics } from "../services/platform/observability/metrics.ts";
import { rpcClientTracer } from "../services/platform/observability/rpc-observers.ts";
import { queueDashboard } from "./queue-dashboard.ts";

export interface RunningGateway {
  port: number;
  readiness: GatewayDeps["readiness"];
  close(): Promise<void>;
}

export function gatewayClients(rpc: RpcClients, config: Config): GatewayClients {
  return {
    merchants: rpc.client(MerchantService, config.serviceUrls.merchants),
    members: rpc.client(MembersService, config.serviceUrls.merchants),
    catalog: rpc.client(CatalogService, config.serviceUrls.catalog),
    sandbox: rpc.client(SandboxService, config.serviceUrls.sandbox),
    wallet: rpc.client(WalletService, config.serviceUrls.wallet),
    subscriptions: rpc.client(SubscriptionsService, config.serviceUrls.subscriptions),
    refunds: rpc.client(RefundsService, config.serviceUrls.subscriptions),
    pricing: rpc.client(PricingService, config.serviceUrls.subscriptions),
    orders: rpc.client(OrdersService, config.serviceUrls.orders),
    events: rpc.client(EventsService, config.serviceUrls.events),
    payouts: rpc.client(PayoutsService, config.serviceUrls.payouts),
    audit: rpc.client(AuditService, config.serviceUrls.merchants),
  };
}

/** Longest a single Redis command of a request may take; a healthy Redis answers in well under a millisecond. */
const REDIS_COMMAND_TIMEOUT_MS = 1000;

/**
 * Readiness of the gateway: Redis, and each service it calls (by name), each
 * services process asked once at its own /readyz (its pool and its Redis).
 */
function gatewayReadiness(config: Config, redis: RedisConnection): () => Promise<Record<string, string>> {
  const urls = [...new Set(Object.values(config.serviceUrls))];
  return async () => {
    const checks: ReadinessChecks = { redis: redisCheck(redis) };
    for (const url of urls) checks[url] = serviceCheck(url, READINESS_TIMEOUT_MS - 200);
    const result = (await runChecks(checks, READINESS_TIMEOUT_MS)).checks;
    const byService = Object.fromEntries(Object.entries(config.serviceUrls).map(([name, url]) => [name, result[url]!]));
    return { redis: result.redis!, ...byService };
  };
}

/**
 * `shared.rpc`: the process's clients (the composition root's, in-process calls, tracing and deadlines
 * included); a gateway started alone builds its own.
 */
export async function startGateway(
  config: Config,
  logger: Logger,
  port: number,
  shared: { metrics?: BillingMetrics; rpc?: RpcClients } = {},
): Promise<RunningGateway> {
  const { metrics } = shared;
  const rpc = shared.rpc ?? new RpcClients(config.internalApiToken, config.tracing ? [rpcClientTracer()] : [], { timeoutMs: config.rpcTimeoutMs });
  const dashboard = queueDashboard(config, logger);
  // Auto-pipelining: the idempotency claims and results of requests handled in one event-loop turn go out in one write.
  // Not the readiness PING: a pipeline is written only once the connection is "ready", while a lone PING may go
  // out as soon as the socket connects (as before), so /readyz does not answer 503 in that first moment.
  // commandTimeout: a Redis that accepts the connection but stops answering must fail a command (the session, idempotency
  // and limiter paths each handle a Redis error) rather than hold the request until the client gives up.
  const redis = connectRedis(config, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    autoPipeliningIgnoredCommands: ["ping"],
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  });
  redis.on("error", () => {});
  const clients = gatewayClients(rpc, config);
  const rateLimit = redisRateLimiter(config, clients, logger);
  const deps: GatewayDeps = {
    config,
    logger,
    clients,
    rateLimiter: rateLimit.limiter,
    // No Postgres pool here: ready when Redis and every services process it calls are.
    readiness: gatewayReadiness(config, redis),
  };
  const keyCache = new ApiKeyCache();
  const revocations = listenForRevocations(keyCache, config, config.queuePrefix, logger);
  const app = createGatewayApp(deps, {
    idempotencyStore: redisIdempotencyStore(redis, config.queuePrefix, config.retention.idempotencyHours, outcomeUnknownMs(config)),
    extraRouters: hostedPages(deps, redis),
    apiKeyCache: { cache: keyCache, isLive: revocations.isLive },
    ...(metrics && { metrics }),
    middleware: [dashboard.middleware],
  });
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(port, () => resolve(s));
    s.once("error", reject);
  });
  server.keepAliveTimeout = 65_000;
  // Once closing, every response ends its connection (`Connection: close`): server.close() waits for connections
  // that are not idle, and a keep-alive client that keeps sending never leaves one idle (the process then waited
  // for the shutdown bound and exited 1 with requests in flight). Before the app's handler, so no header is out yet.
  let closing = false;
  server.prependListener("request", (_req, res) => {
    if (closing) res.shouldKeepAlive = false;
  });
  const bound = (server.address() as AddressInfo).port;
  logger.info({ port: bound }, "gateway listening");
  return {
    port: bound,
    readiness: deps.readiness,
    async close() {
      closing = true;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      if (!shared.rpc) rpc.close();
      revocations.close();
      rateLimit.close();
      await dashboard.close();
      redis.disconnect();
    },
  };
}

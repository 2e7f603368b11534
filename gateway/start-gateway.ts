import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import pg from "pg";
import type { Config } from "../services/platform/config.ts";
import type { Logger } from "../services/platform/logger.ts";
import { RpcClients } from "../services/platform/rpc/clients.ts";
import { CatalogService } from "../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { MerchantService } from "../proto/gen/billing/merchants/v1/merchants_pb.ts";
import { SandboxService } from "../proto/gen/billing/sandbox/v1/sandbox_pb.ts";
import { WalletService } from "../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { SubscriptionsService } from "../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { OrdersService } from "../proto/gen/billing/orders/v1/orders_pb.ts";
import { EventsService } from "../proto/gen/billing/events/v1/events_pb.ts";
import { createGatewayApp } from "./app.ts";
import type { GatewayClients, GatewayDeps } from "./deps.ts";
import { redisIdempotencyStore } from "./idempotency.ts";
import { ApiKeyCache, listenForRevocations } from "./api-key-cache.ts";
import { hostedPages } from "./pages/index.ts";

export interface RunningGateway {
  port: number;
  close(): Promise<void>;
}

export function gatewayClients(rpc: RpcClients, config: Config): GatewayClients {
  return {
    merchants: rpc.client(MerchantService, config.serviceUrls.merchants),
    catalog: rpc.client(CatalogService, config.serviceUrls.catalog),
    sandbox: rpc.client(SandboxService, config.serviceUrls.sandbox),
    wallet: rpc.client(WalletService, config.serviceUrls.wallet),
    subscriptions: rpc.client(SubscriptionsService, config.serviceUrls.subscriptions),
    orders: rpc.client(OrdersService, config.serviceUrls.orders),
    events: rpc.client(EventsService, config.serviceUrls.events),
  };
}

/** `shared`: the process's clients (the composition root's, in-process calls included); otherwise the gateway owns its own. */
export async function startGateway(config: Config, logger: Logger, port: number, shared?: RpcClients): Promise<RunningGateway> {
  const rpc = shared ?? new RpcClients(config.internalApiToken);
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on("error", () => {});
  // Readiness only: one short-lived connection at a time, no ORM in the gateway.
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 1, idleTimeoutMillis: 10_000 });
  pool.on("error", () => {});
  const deps: GatewayDeps = {
    config,
    logger,
    clients: gatewayClients(rpc, config),
    readiness: async () => ({
      postgres: await pool.query("select 1").then(() => "ok", (e: Error) => `unreachable: ${e.message}`),
      redis: await redis.ping().then(() => "ok", (e: Error) => `unreachable: ${e.message}`),
    }),
  };
  const keyCache = new ApiKeyCache();
  const revocations = listenForRevocations(keyCache, config.redisUrl, config.queuePrefix, logger);
  const app = createGatewayApp(deps, {
    idempotencyStore: redisIdempotencyStore(redis, config.queuePrefix),
    extraRouters: hostedPages(deps, redis),
    apiKeyCache: { cache: keyCache, isLive: revocations.isLive },
  });
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(port, () => resolve(s));
    s.once("error", reject);
  });
  server.keepAliveTimeout = 65_000;
  const bound = (server.address() as AddressInfo).port;
  logger.info({ port: bound }, "gateway listening");
  return {
    port: bound,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      if (!shared) rpc.close();
      revocations.close();
      redis.disconnect();
      await pool.end();
    },
  };
}

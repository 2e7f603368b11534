import { randomBytes } from "node:crypto";
import { loadConfig, type Config, type ServiceName, type WorkerGroup, SERVICE_NAMES, WORKER_GROUP_NAMES } from "../../services/platform/config.ts";
import { createLogger } from "../../services/platform/logger.ts";
import { startSystem, type RunningSystem } from "../../services/cli/system.ts";
import type { JobDefinition } from "../../services/platform/queue/define-job.ts";
import { contextFor } from "../../services/platform/service-deps.ts";
import type { UseCaseContext } from "../../services/platform/use-case.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { infrastructure } from "./infrastructure.ts";
import { apiClient, type ApiClient } from "./http.ts";

export const ADMIN_KEY = "test-admin-key-0123456789";

export interface TestSystemOptions {
  services?: readonly ServiceName[];
  gateway?: boolean;
  workerGroups?: readonly WorkerGroup[];
  env?: Record<string, string>;
  jobs?: JobDefinition<any>[];
}

export interface TestSystem {
  config: Config;
  system: RunningSystem;
  database: TestDatabase;
  baseUrl: string;
  /** Unauthenticated client (add headers per call). */
  http: ApiClient;
  admin: ApiClient;
  /** A new merchant with an API key, and a client that sends it. */
  createMerchant(name?: string): Promise<{ id: string; apiKey: string; apiKeyId: string; api: ApiClient }>;
  /** A use-case context on this system's database (for arranging and asserting). */
  context(): UseCaseContext;
  sql<T = any>(query: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * The whole system in this process, on its own database and queue prefix,
 * listening on free ports: tests talk to it over real HTTP, gRPC, Postgres and Redis.
 */
export async function startTestSystem(options: TestSystemOptions = {}): Promise<TestSystem> {
  const infra = await infrastructure();
  const database = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: database.url,
    REDIS_URL: infra.redisUrl,
    ADMIN_API_KEY: ADMIN_KEY,
    QUEUE_PREFIX: `t${randomBytes(5).toString("hex")}`,
    SANDBOX: "true",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    DB_POOL_MAX: "5",
    SWEEP_INTERVAL_MS: "500",
    // Extra systems started from this config serve no operations port (startTestSystem picks a free one).
    METRICS_PORT: "0",
    ...options.env,
  });
  const logger = createLogger(config.logLevel);
  let system: RunningSystem;
  try {
    system = await startSystem(config, logger, {
      services: options.services ?? SERVICE_NAMES,
      gateway: options.gateway ?? true,
      workerGroups: options.workerGroups ?? WORKER_GROUP_NAMES,
      gatewayPort: 0,
      servicesPort: 0,
      metricsPort: 0,
      jobs: options.jobs,
    });
  } catch (err) {
    await database.drop();
    throw err;
  }
  const baseUrl = `http://127.0.0.1:${system.gatewayPort}`;
  const http = apiClient(baseUrl);
  const admin = apiClient(baseUrl, { "x-admin-key": ADMIN_KEY });
  return {
    config: system.config,
    system,
    database,
    baseUrl,
    http,
    admin,
    async createMerchant(name = "Test merchant") {
      const res = await admin.post("/admin/v1/merchants", { name });
      if (res.status !== 201) throw new Error(`merchant create failed: ${res.status} ${res.text}`);
      return { id: res.body.id, apiKey: res.body.apiKey, apiKeyId: res.body.apiKeyId, api: apiClient(baseUrl, { "x-api-key": res.body.apiKey }) };
    },
    context() {
      return contextFor({ orm: system.orm!, clock: system.clock!.clock });
    },
    async sql(query, params = []) {
      return system.orm!.em.getConnection().execute(query, params as any[]);
    },
    async close() {
      await system.close();
      await database.drop();
    },
  };
}

import { randomBytes } from "node:crypto";
import { loadConfig, type Config, type ServiceName, type WorkerGroup, SERVICE_NAMES, WORKER_GROUP_NAMES } from "../../services/platform/config.ts";
import { createLogger, type Logger } from "../../services/platform/logger.ts";
import { startSystem, type RunningSystem } from "../../cli/system.ts";
import type { AnyHandler } from "../../services/platform/queue/define-job.ts";
import type { JobKind, SweepKind } from "../../services/platform/queue/job-kind.ts";
import { ALL_JOBS } from "../../workers/registry.ts";
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
  /** Run only the handlers of these job kinds (see handlersOf). */
  jobs?: readonly AnyHandler[];
  /** The system's logger (a test that asserts on log lines passes one writing to a buffer); default LOG_LEVEL, silent. */
  logger?: Logger;
  /** Where the system reaches its fresh database (e.g. through a pooler in front of it); default the database's own URL. */
  databaseUrl?: (database: TestDatabase) => string | Promise<string>;
}

export interface TestSystem {
  config: Config;
  system: RunningSystem;
  /** The worker groups started with the system (test/support/sweeps.ts drains their queues). */
  workerGroups: readonly WorkerGroup[];
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
  let databaseUrl = database.url;
  try {
    if (options.databaseUrl) databaseUrl = await options.databaseUrl(database);
  } catch (err) {
    await database.drop();
    throw err;
  }
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    REDIS_URL: infra.redisUrl,
    ADMIN_API_KEY: ADMIN_KEY,
    QUEUE_PREFIX: `t${randomBytes(5).toString("hex")}`,
    SANDBOX: "true",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    DB_POOL_MAX: "5",
    SWEEP_INTERVAL_MS: "500",
    // Tests drive merchants far faster than the default limit; rate-limit tests set their own.
    RATE_LIMIT_BURST: "100000",
    RATE_LIMIT_PER_SECOND: "100000",
    // Extra systems started from this config serve no operations port (startTestSystem picks a free one).
    METRICS_PORT: "0",
    ...options.env,
  });
  const logger = options.logger ?? createLogger(config.logLevel);
  const workerGroups = options.workerGroups ?? WORKER_GROUP_NAMES;
  let system: RunningSystem;
  try {
    system = await startSystem(config, logger, {
      services: options.services ?? SERVICE_NAMES,
      gateway: options.gateway ?? true,
      workerGroups,
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
    workerGroups,
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

/**
 * The test system of the enclosing describe: started by a `before` hook, closed by
 * an `after` hook, both registered here (hooks run in the order they are
 * registered: a suite's own `before` after this line sees the system started,
 * its own `after` runs once the system is closed). The handle forwards to the
 * started system, so `sys.x` reads as it would on startTestSystem's result;
 * touching it outside the hooks and tests throws. A suite that stops or
 * restarts its system inside a test keeps to startTestSystem.
 */
export function useTestSystem(options: TestSystemOptions = {}): TestSystem {
  let started: TestSystem | undefined;
  before(async () => {
    started = await startTestSystem(options);
  });
  after(async () => {
    await started?.close();
    started = undefined;
  });
  return new Proxy({} as TestSystem, {
    get(_, key) {
      if (!started) throw new Error(`the test system is not running (asked for ${String(key)}): use it inside hooks and tests`);
      return Reflect.get(started, key);
    },
  });
}

/** The production handlers of the given kinds, for a test system that runs only those jobs. */
export function handlersOf(...kinds: (JobKind<any> | SweepKind)[]): AnyHandler[] {
  return kinds.map((kind) => {
    const handler = ALL_JOBS.find((h) => h.kind === kind);
    if (!handler) throw new Error(`no handler for ${kind.name}`);
    return handler;
  });
}

/**
 * Real PostgreSQL and Redis for the tests: from DATABASE_URL / REDIS_URL when
 * set (TEST_DATABASE_URL / TEST_REDIS_URL win), else started once per run with
 * testcontainers. testcontainers is imported only in that case, because it
 * fails at once on a machine without a container runtime.
 */
export interface Infrastructure {
  /** A server URL; its database is used only to create and drop test databases. */
  databaseUrl: string;
  redisUrl: string;
  stop(): Promise<void>;
}

let current: Promise<Infrastructure> | undefined;

export function infrastructure(): Promise<Infrastructure> {
  current ??= resolve();
  return current;
}

async function resolve(): Promise<Infrastructure> {
  const databaseUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  const redisUrl = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL;
  if (databaseUrl && redisUrl) return { databaseUrl, redisUrl, stop: async () => {} };

  const { GenericContainer, Wait } = await import("testcontainers");
  const pg = databaseUrl
    ? undefined
    : await new GenericContainer("postgres:16-alpine")
        .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: "trust" })
        .withExposedPorts(5432)
        .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
        .start();
  const redis = redisUrl ? undefined : await new GenericContainer("redis:7-alpine").withExposedPorts(6379).start();
  return {
    databaseUrl: databaseUrl ?? `postgres://postgres@${pg!.getHost()}:${pg!.getMappedPort(5432)}/postgres`,
    redisUrl: redisUrl ?? `redis://${redis!.getHost()}:${redis!.getMappedPort(6379)}`,
    async stop() {
      await pg?.stop();
      await redis?.stop();
    },
  };
}

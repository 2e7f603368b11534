import type { Config } from "../services/platform/config.ts";
import { createOrm, ensureDatabase, migrate, type Orm } from "../services/platform/database/orm.ts";
import { entities } from "../services/entities.ts";

/** An ORM over every domain's entities: the one place that joins the platform's ORM with the domains. */
export function openDatabase(
  databaseUrl: string,
  poolMax: number,
  options: { statementTimeoutMs?: number; connectTimeoutMs?: number; preparedStatements?: boolean } = {},
): Promise<Orm> {
  return createOrm({ databaseUrl, poolMax, entities, ...options });
}

/** Creates the database when missing and applies pending migrations (`billing migrate`, `billing start all`). */
export async function migrateDatabase(config: Config): Promise<{ databaseCreated: boolean; applied: string[] }> {
  const databaseCreated = await ensureDatabase(config.databaseUrl);
  const orm = await openDatabase(config.databaseUrl, 1, { preparedStatements: config.dbPreparedStatements });
  try {
    return { databaseCreated, applied: await migrate(orm) };
  } finally {
    await orm.close();
  }
}

import { MikroORM } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import type { EntitySchema } from "@mikro-orm/core";
import pg from "pg";
import { migrations } from "./migrations/index.ts";
import { guardPoolSlots } from "./pool-guard.ts";
import { UnnamedStatementsClient } from "./unnamed-statements.ts";

export type Orm = MikroORM;

interface OrmOptions {
  databaseUrl: string;
  poolMax: number;
  /** Every entity the process maps; the composition root passes services/entities.ts. */
  entities: readonly unknown[];
  debug?: boolean;
  /**
   * Bounds that keep a request from hanging on a sick database: the server
   * cancels a statement after `statementTimeoutMs` (57014), and taking a pool
   * slot or opening a connection gives up after `connectTimeoutMs`. Both
   * errors become 503/504 at the edge. Unset: no bound (migrations).
   */
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
  /**
   * false: no named (server-side prepared) statements, for a pooler in
   * transaction mode (DB_PREPARED_STATEMENTS; see unnamed-statements.ts).
   * Default true.
   */
  preparedStatements?: boolean;
  /** Test seam: false builds the pool without the slot guard (proves the wedge it prevents). */
  guardSlots?: boolean;
}

export async function createOrm(options: OrmOptions): Promise<Orm> {
  return MikroORM.init({
    clientUrl: options.databaseUrl,
    entities: options.entities as EntitySchema[],
    extensions: [Migrator],
    migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, tableName: "schema_migrations", silent: true, snapshot: false },
    pool: { min: 0, max: options.poolMax },
    driverOptions: {
      onPoolCreated: (pool: pg.Pool) => {
        if (options.guardSlots !== false) guardPoolSlots(pool);
      },
      ...(options.preparedStatements === false ? { Client: UnnamedStatementsClient } : {}),
      // Half-open sockets (a failover without FIN) are noticed by TCP, not after hours.
      keepAlive: true,
      keepAliveInitialDelayMillis: 5_000,
      ...(options.connectTimeoutMs ? { connectionTimeoutMillis: options.connectTimeoutMs } : {}),
      ...(options.statementTimeoutMs
        ? {
            statement_timeout: options.statementTimeoutMs,
            // A transaction abandoned by a crashed holder frees its locks on the server side too.
            // Both travel as startup parameters, which a pooler in transaction mode cannot pass on: behind
            // PgBouncer they are set on the role instead (docs/operations.md, "Behind PgBouncer"; checkSessionBounds).
            idle_in_transaction_session_timeout: Math.max(options.statementTimeoutMs * 6, 60_000),
          }
        : {}),
    },
    debug: options.debug ?? false,
    // Entities are declared with defineEntity; there is nothing to reflect.
    discovery: { warnWhenNoEntities: false },
    allowGlobalContext: false,
    timezone: "Z",
  });
}

/** Applies pending migrations; returns the names applied. */
export async function migrate(orm: Orm): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((m) => m.name);
}

/**
 * Creates the database named in the URL when it does not exist (developer
 * convenience for `npm start`; production databases are provisioned).
 */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (!name) return false;
  url.pathname = "/postgres";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query("select 1 from pg_database where datname = $1", [name]);
    if (found.rowCount) return false;
    await client.query(`create database "${name.replace(/"/g, '""')}"`);
    return true;
  } finally {
    await client.end();
  }
}

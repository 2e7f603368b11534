import { randomBytes } from "node:crypto";
import pg from "pg";
import { createOrm, migrate } from "../../services/platform/database/orm.ts";
import { infrastructure } from "./infrastructure.ts";
import { entities } from "../../services/entities.ts";

/**
 * One database per test system, cloned from a template migrated once per run
 * (CREATE DATABASE … TEMPLATE is a file copy: milliseconds, not a migration).
 */
const RUN = `${process.pid}_${randomBytes(3).toString("hex")}`;
const TEMPLATE = `billing_tpl_${RUN}`;
let templateReady: Promise<void> | undefined;

function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const { databaseUrl } = await infrastructure();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function ensureTemplate(): Promise<void> {
  templateReady ??= (async () => {
    const { databaseUrl } = await infrastructure();
    await admin((c) => c.query(`create database ${TEMPLATE}`));
    const orm = await createOrm({ databaseUrl: withDatabase(databaseUrl, TEMPLATE), poolMax: 1, entities });
    try {
      await migrate(orm);
    } finally {
      await orm.close();
    }
  })();
  return templateReady;
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  await ensureTemplate();
  const { databaseUrl } = await infrastructure();
  const name = `billing_t_${RUN}_${randomBytes(4).toString("hex")}`;
  await admin((c) => c.query(`create database ${name} template ${TEMPLATE}`));
  return {
    url: withDatabase(databaseUrl, name),
    name,
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => {}),
  };
}

/** Drops the template; called once after the whole run. */
export async function dropTemplate(): Promise<void> {
  if (!templateReady) return;
  await templateReady.catch(() => {});
  await admin((c) => c.query(`drop database if exists ${TEMPLATE} with (force)`)).catch(() => {});
}

export { withDatabase };

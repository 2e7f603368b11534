import pg from "pg";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { EntityName } from "@mikro-orm/core";

/**
 * Named (prepared) statements for the hot paths, run on the ORM's own pg pool.
 *
 * Why: the ORM inlines every value, so PostgreSQL parses and plans each of its
 * statements again, and building one costs more CPU than running it. A named
 * statement is parsed and planned once per connection and then only bound and
 * executed; its values travel as parameters. Only for statements whose shape
 * never changes (a fixed text, `$n` placeholders).
 *
 * Rows come back with pg's standard parsers (timestamptz → Date, jsonb →
 * object, numeric → string, int4 → number): the same values the ORM hydrates
 * (the ORM's pool keeps timestamps as text for its own parsing, so the
 * parsers are set per statement).
 *
 * Behind a pooler in transaction mode (`DB_PREPARED_STATEMENTS=false`) the
 * pool's client sends them unnamed (unnamed-statements.ts): the same text and
 * parameters, parsed on each execution, so no statement outlives the server
 * session its transaction was lent.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/** `name` must be unique in the process: a connection keeps one plan per name. */
export function preparedStatement(name: string, text: string): PreparedStatement {
  return Object.freeze({ name, text });
}

/** Per ORM (its metadata): the statements built from it, by name. */
const statementsByOrm = new WeakMap<object, Map<string, PreparedStatement>>();

/**
 * The statement `name` of this ORM, its text built once (by `text`, which may
 * read the entity metadata, e.g. selectColumns) and kept for the ORM's life.
 */
export function statementFor(em: EntityManager, name: string, text: () => string): PreparedStatement {
  const key = em.getMetadata();
  let byName = statementsByOrm.get(key);
  if (!byName) statementsByOrm.set(key, (byName = new Map()));
  let statement = byName.get(name);
  if (!statement) byName.set(name, (statement = preparedStatement(name, text())));
  return statement;
}

type Queryable = Pick<pg.Pool, "query"> | Pick<pg.PoolClient, "query">;

const pools = new WeakMap<object, pg.Pool>();

/** The pg pool behind the ORM of `em` (one per ORM; asked once). */
export async function poolOf(em: EntityManager): Promise<pg.Pool> {
  const connection = em.getConnection();
  let pool = pools.get(connection);
  if (!pool) {
    pool = (await connection.getNativeClient()) as pg.Pool;
    pools.set(connection, pool);
  }
  return pool;
}

/** Runs a named statement on `target` (the pool: autocommit; or a client holding a transaction). */
export async function runPrepared<R extends object>(target: Queryable, statement: PreparedStatement, values: unknown[]): Promise<R[]> {
  const result = await (target as pg.Pool).query<R>({ name: statement.name, text: statement.text, values, types: pg.types });
  return result.rows;
}

/**
 * `alias.column as "property"` for every column of an entity the ORM maps, so
 * a row comes back shaped like the entity (the same keys and value types as
 * the ORM hydrates) and follows the entity when a column is added.
 */
export function selectColumns(em: EntityManager, entity: EntityName, alias: string, prefix = ""): string {
  const meta = em.getMetadata().find(entity);
  if (!meta) throw new Error(`unknown entity ${String(entity)}`);
  return meta.props
    .filter((p) => p.fieldNames?.length === 1 && p.persist !== false)
    .map((p) => `${alias}.${quote(p.fieldNames[0]!)} as ${quote(prefix + p.name)}`)
    .join(", ");
}

const dateProperties = new WeakMap<object, string[]>();

/**
 * Rows selected with selectColumns through the ORM's own connection
 * (`em.execute`, e.g. under a lock inside an ORM transaction, where a named
 * statement on the pool would not see the transaction): that connection hands
 * timestamps back as text, so the entity's Date properties (read from the
 * metadata once) are turned into Dates, as the ORM hydrates them. In place.
 */
export function asEntityRows<T>(em: EntityManager, entity: EntityName, rows: Record<string, unknown>[]): T[] {
  const meta = em.getMetadata().find(entity);
  if (!meta) throw new Error(`unknown entity ${String(entity)}`);
  let dates = dateProperties.get(meta);
  if (!dates) dateProperties.set(meta, (dates = meta.props.filter((p) => p.runtimeType === "Date").map((p) => p.name)));
  for (const row of rows) {
    for (const key of dates) {
      const value = row[key];
      if (value != null && !(value instanceof Date)) row[key] = new Date(value as string);
    }
  }
  return rows as unknown as T[];
}

const quote = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;

/**
 * The pieces of `insert into <table> (<columns>) values (<$n…>)` for one row
 * of an entity (a plain object or an entity instance): every mapped column the
 * row holds a value for, in the entity's order (a property left undefined
 * keeps the column's database default), json columns sent as text and cast.
 * `firstParam` numbers the placeholders, so several inserts can share one
 * statement (one round trip). `signature` names the shape, for the
 * statement's name.
 */
export function insertRow(em: EntityManager, entity: EntityName, row: object, firstParam = 1): { sql: string; values: unknown[]; signature: string } {
  const { table, columns: all } = insertableColumns(em, entity);
  const columns: string[] = [];
  const placeholders: string[] = [];
  const values: unknown[] = [];
  for (const column of all) {
    const value = (row as Record<string, unknown>)[column.property];
    if (value === undefined) continue;
    columns.push(column.quoted);
    placeholders.push(`$${firstParam + values.length}${column.cast}`);
    values.push(column.cast && value !== null ? JSON.stringify(value) : value);
  }
  return {
    sql: `insert into ${table} (${columns.join(", ")}) values (${placeholders.join(", ")})`,
    values,
    signature: `${table}(${columns.join(",")})`,
  };
}

/** A column an entity maps from one property (the shape insertRow and tracked-rows.ts build their statements from). */
export interface MappedColumn {
  property: string;
  /** The column's name, and quoted for SQL. */
  field: string;
  quoted: string;
  /** As the entity declares it, lower case (e.g. `numeric(38,18)`, `jsonb`, `text[]`). */
  columnType: string;
  primary: boolean;
}

const mapped = new WeakMap<object, { table: string; columns: MappedColumn[] }>();

/** An entity's table (quoted) and single-column persisted properties, in the entity's order (read from the metadata once). */
export function mappedColumns(em: EntityManager, entity: EntityName): { table: string; columns: MappedColumn[] } {
  const meta = em.getMetadata().find(entity);
  if (!meta) throw new Error(`unknown entity ${String(entity)}`);
  let found = mapped.get(meta);
  if (!found) {
    const columns = meta.props
      .filter((p) => p.persist !== false && p.fieldNames?.length === 1)
      .map((p) => ({
        property: p.name,
        field: p.fieldNames[0]!,
        quoted: quote(p.fieldNames[0]!),
        columnType: (p.columnTypes?.[0] ?? "").toLowerCase(),
        primary: p.primary === true,
      }));
    found = { table: quote(meta.tableName), columns };
    mapped.set(meta, found);
  }
  return found;
}

interface InsertableColumn {
  property: string;
  quoted: string;
  /** `::jsonb` (or `::json`) for json columns, whose values are sent as text; empty otherwise. */
  cast: string;
}

const insertables = new WeakMap<object, { table: string; columns: InsertableColumn[] }>();

function insertableColumns(em: EntityManager, entity: EntityName): { table: string; columns: InsertableColumn[] } {
  const { table, columns } = mappedColumns(em, entity);
  let found = insertables.get(columns);
  if (!found) {
    found = { table, columns: columns.map((c) => ({ property: c.property, quoted: c.quoted, cast: JSON_TYPES.has(c.columnType) ? `::${c.columnType}` : "" })) };
    insertables.set(columns, found);
  }
  return found;
}

const JSON_TYPES = new Set(["json", "jsonb"]);

import type { EntityManager } from "@mikro-orm/postgresql";
import type { EntityName } from "@mikro-orm/core";
import { executeWrites, type Write } from "./bound-values.ts";
import { mappedColumns } from "./prepared.ts";

/**
 * Plain rows read under their row locks (selectColumns + asEntityRows), changed
 * in place by the same domain code that changes entities, then written back
 * set-based: one update per shape of change (the set of columns a row
 * changed), each row writing only the columns it changed.
 *
 * Why: a renewal set settles hundreds of rows in one transaction. Through the
 * ORM's unit of work, hydrating them, snapshotting them, computing their
 * change sets and inlining every update's values was the largest part of the
 * renewals' CPU (B8's profile: the ORM and its garbage ~40 % of the process).
 * Here a row costs a shallow copy and a comparison, and a set costs one
 * statement per shape (a renewal set: one for the paid, one for the failed).
 *
 * Exact: a column a row did not change is not written, so a value the
 * database holds more precisely than JS (a timestamp's microseconds) is never
 * rounded; a changed value is cast by the column's own type, as any write
 * is. Only for rows that exist and are locked by the transaction: the write
 * throws when a row is not found (nothing half-written: the transaction rolls
 * back).
 */
export interface TrackedRows<T extends { id: string }> {
  readonly entity: EntityName;
  readonly rows: readonly T[];
}

interface Column {
  property: string;
  /** The column's name: the key of its value in the statement's JSON. */
  field: string;
  quoted: string;
  /** The type the JSON value is read as: the column's base type (no length or precision: the column's own applies on assignment). */
  type: string;
  /** json/jsonb and arrays: compared and snapshotted as JSON text (domain code may change them in place). */
  structured: boolean;
}

const snapshots = new WeakMap<object, Record<string, unknown>>();
const columnsByMeta = new WeakMap<object, { table: string; columns: Column[] }>();

/** Starts tracking `rows` (as read now): what the writes later find changed is what changed from here. */
export function trackRows<T extends { id: string }>(em: EntityManager, entity: EntityName, rows: T[]): TrackedRows<T> {
  const { columns } = columnsOf(em, entity);
  for (const row of rows) snapshots.set(row, snapshot(row as Record<string, unknown>, columns));
  return { entity, rows };
}

/** Writes what each tracked row changed since trackRows, set-based, in one statement. */
export async function writeTrackedRows<T extends { id: string }>(em: EntityManager, tracked: TrackedRows<T>): Promise<void> {
  await executeWrites(em, trackedRowsWrites(em, tracked));
}

/** The writes of writeTrackedRows, for a caller that runs them with others (executeWrites): one per shape of change. */
export function trackedRowsWrites<T extends { id: string }>(em: EntityManager, tracked: TrackedRows<T>): Write[] {
  const { table, columns } = columnsOf(em, tracked.entity);
  const byShape = new Map<string, { changed: Column[]; rows: Record<string, unknown>[] }>();
  for (const row of tracked.rows as unknown as Record<string, unknown>[]) {
    const before = snapshots.get(row);
    if (!before) throw new Error(`trackedRowsWrites: a row of ${table} was not tracked`);
    const changed = columns.filter((c) => !sameValue(c, before[c.property], row[c.property]));
    if (changed.length === 0) continue;
    const shape = changed.map((c) => c.property).join(",");
    let group = byShape.get(shape);
    if (!group) byShape.set(shape, (group = { changed, rows: [] }));
    group.rows.push(row);
  }
  return [...byShape.values()].map(({ changed, rows }) => ({
    // The rows as one JSON parameter, bound (bound-values.ts); the ids again as `= any`, so the rows are found by the primary key.
    sql: `update ${table} as t set ${changed.map((c) => `${c.quoted} = v.${c.quoted}`).join(", ")}
            from jsonb_to_recordset(?::jsonb) as v("id" uuid, ${changed.map((c) => `${c.quoted} ${c.type}`).join(", ")})
           where t."id" = v."id" and t."id" = any(?::uuid[])
           returning t."id"`,
    values: [
      JSON.stringify(rows.map((row) => Object.fromEntries([["id", row.id], ...changed.map((c) => [c.field, row[c.property] ?? null])]))),
      rows.map((row) => row.id),
    ],
    rows: rows.length,
    what: `rows of ${table}`,
  }));
}

function columnsOf(em: EntityManager, entity: EntityName): { table: string; columns: Column[] } {
  const { table, columns: all } = mappedColumns(em, entity);
  let found = columnsByMeta.get(all);
  if (!found) {
    if (!all.some((c) => c.primary && c.property === "id")) throw new Error(`trackRows: ${table} has no primary key "id"`);
    const columns = all
      .filter((c) => !c.primary)
      .map((c) => {
        const type = (c.columnType || "text").replace(/\(.*?\)/g, "");
        return { property: c.property, field: c.field, quoted: c.quoted, type, structured: type.startsWith("json") || type.endsWith("[]") };
      });
    found = { table, columns };
    columnsByMeta.set(all, found);
  }
  return found;
}

function snapshot(row: Record<string, unknown>, columns: Column[]): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const c of columns) {
    const value = row[c.property];
    copy[c.property] = c.structured && value != null ? JSON.stringify(value) : value instanceof Date ? value.getTime() : value;
  }
  return copy;
}

function sameValue(column: Column, before: unknown, now: unknown): boolean {
  if (now == null || before == null) return now == null && before == null;
  if (column.structured) return before === JSON.stringify(now);
  if (now instanceof Date) {
    // JSON would send an invalid Date as null: a bug upstream must fail the transaction, never clear a billing date.
    if (!Number.isFinite(now.getTime())) throw new Error(`tracked rows: ${column.property} is an invalid Date`);
    return before === now.getTime();
  }
  return before === now;
}

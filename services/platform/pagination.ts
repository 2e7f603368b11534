import { invalid } from "./errors.ts";

/**
 * Keyset pagination, newest first: (createdAt, id) descending. The cursor is
 * the last row's key, so a page costs one index range scan whatever the table
 * size, and rows inserted meanwhile (always newer) never shift later pages.
 */
export interface Page<T> {
  items: T[];
  hasMore: boolean;
  nextCursor: string | undefined;
}

interface CursorKey {
  createdAt: Date;
  id: string;
}

const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.createdAt.toISOString(), key.id])).toString("base64url");
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function decodeCursor(cursor: string): CursorKey {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [unknown, unknown];
    // Exactly what encodeCursor writes: anything else (a forged key Postgres cannot compare) is a 400, never a 500.
    if (typeof at !== "string" || !ISO_INSTANT.test(at) || typeof id !== "string" || !UUID.test(id)) throw new Error("bad");
    const createdAt = new Date(at);
    if (Number.isNaN(createdAt.getTime())) throw new Error("bad");
    return { createdAt, id };
  } catch {
    throw invalid("INVALID_REQUEST", "cursor: is not a cursor returned by this list");
  }
}

/** The MikroORM filter that selects rows strictly after the cursor. */
export function afterCursor(cursor: string | undefined): Record<string, unknown> {
  if (!cursor) return {};
  const key = decodeCursor(cursor);
  return { $or: [{ createdAt: { $lt: key.createdAt } }, { createdAt: key.createdAt, id: { $lt: key.id } }] };
}

export const KEYSET_ORDER = { createdAt: "desc", id: "desc" } as const;

export function clampLimit(limit: number | undefined): number {
  if (!limit || limit < 1) return DEFAULT_PAGE_SIZE;
  return Math.min(limit, MAX_PAGE_SIZE);
}

/** Turns limit+1 fetched rows into a page. */
export function toPage<T extends CursorKey>(rows: T[], limit: number): Page<T> {
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  const last = items.at(-1);
  return { items, hasMore, nextCursor: hasMore && last ? encodeCursor(last) : undefined };
}

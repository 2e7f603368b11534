import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { clampLimit, decodeCursor, encodeCursor, type Page } from "../platform/pagination.ts";
import type { AuditEntryRow } from "./audit-entry-record.ts";
import { merchantAuditEntries } from "./audit-entry-store.ts";

interface ListAuditEntriesInput {
  merchantId: string;
  limit?: number | undefined;
  cursor?: string | undefined;
  /** The actor's id or label, exactly. */
  actor?: string | undefined;
  action?: string | undefined;
  objectId?: string | undefined;
  /** At or after. */
  from?: Date | undefined;
  /** Strictly before. */
  to?: Date | undefined;
}

const TEXT_LIMIT = 200;

/**
 * The merchant's audit entries, newest first, keyset paged on (at, id): one
 * range scan of the merchant's index whatever the log's size (audit-entry-store.ts).
 */
export async function listAuditEntries(ctx: UseCaseContext, input: ListAuditEntriesInput): Promise<Page<AuditEntryRow>> {
  for (const [name, value] of [
    ["actor", input.actor],
    ["action", input.action],
    ["objectId", input.objectId],
  ] as const) {
    if (value !== undefined && value.length > TEXT_LIMIT) throw invalid("INVALID_REQUEST", `${name}: must be at most ${TEXT_LIMIT} characters`);
  }
  if (input.from && input.to && input.from >= input.to) throw invalid("INVALID_REQUEST", "to: must be after from");
  const limit = clampLimit(input.limit);
  const { merchantId, actor, action, objectId, from, to } = input;
  const before = input.cursor ? decodeCursor(input.cursor) : undefined;
  const rows = await merchantAuditEntries(ctx.em, { merchantId, actor, action, objectId, from, to, before }, limit + 1);
  const items = rows.slice(0, limit).map((r) => ({ ...r, at: new Date(r.at) }));
  const last = items.at(-1);
  const hasMore = rows.length > limit;
  return { items, hasMore, nextCursor: hasMore && last ? encodeCursor({ createdAt: last.at, id: last.id }) : undefined };
}

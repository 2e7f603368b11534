import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { clampLimit, decodeCursor, encodeCursor, type Page } from "../platform/pagination.ts";
import type { AuditEntryRow } from "./audit-entry-record.ts";

export interface ListAuditEntriesInput {
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
 * range scan of the merchant's index whatever the log's size. Raw SQL
 * because the log has no entity (nothing in the ORM may write or change it).
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
  const where = ["merchant_id = ?"];
  const params: unknown[] = [input.merchantId];
  if (input.actor) {
    where.push("(actor_id = ? or lower(actor_label) = lower(?))");
    params.push(input.actor, input.actor);
  }
  if (input.action) where.push("action = ?"), params.push(input.action);
  if (input.objectId) where.push("object_id = ?"), params.push(input.objectId);
  if (input.from) where.push("at >= ?"), params.push(input.from);
  if (input.to) where.push("at < ?"), params.push(input.to);
  if (input.cursor) {
    const key = decodeCursor(input.cursor);
    where.push("(at, id) < (?, ?)");
    params.push(key.createdAt, key.id);
  }
  const rows = await ctx.em.getConnection().execute<AuditEntryRow[]>(
    `select id, at, actor_type, actor_id, actor_label, action, object_type, object_id, ip, user_agent, request_id
       from audit_entries where ${where.join(" and ")} order by at desc, id desc limit ${limit + 1}`,
    params,
  );
  const items = rows.slice(0, limit).map((r) => ({ ...r, at: new Date(r.at) }));
  const last = items.at(-1);
  const hasMore = rows.length > limit;
  return { items, hasMore, nextCursor: hasMore && last ? encodeCursor({ createdAt: last.at, id: last.id }) : undefined };
}

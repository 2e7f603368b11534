import { raw, type FilterQuery } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../platform/pagination.ts";
import { Event, type EventRow } from "./entities.ts";
import { isEventType } from "./contract.ts";
import { feedAfter } from "./event-store.ts";

interface ListEventsInput {
  merchantId: string;
  limit?: number | undefined;
  cursor?: string | undefined;
  type?: string | undefined;
  /** Strictly after. */
  createdAfter?: Date | undefined;
  /** Feed mode: events with a feed position above this, oldest first. */
  sequenceAfter?: bigint | undefined;
  /** Events about one object: data.id, or data.subscriptionId (indexed, migration 0033). */
  objectId?: string | undefined;
}

/**
 * The merchant's own events, newest first; or, with `sequenceAfter`, the feed:
 * relayed events in commit order, oldest first, which a poller can follow
 * without ever skipping one (createdAt can commit out of order; the feed cannot).
 */
export async function listEvents(ctx: UseCaseContext, input: ListEventsInput): Promise<Page<EventRow>> {
  if (input.type !== undefined && !isEventType(input.type)) throw invalid("INVALID_REQUEST", `type: unknown event type ${input.type}`);
  if (input.objectId !== undefined && !isUuid(input.objectId)) throw invalid("INVALID_REQUEST", "objectId: must be a uuid");
  const limit = clampLimit(input.limit);
  if (input.sequenceAfter !== undefined) {
    if (input.cursor !== undefined || input.createdAfter !== undefined || input.objectId !== undefined) {
      throw invalid("INVALID_REQUEST", "sequenceAfter: cannot be combined with cursor, createdAfter or objectId");
    }
    const found = await feedAfter(ctx.em, input.merchantId, input.sequenceAfter, limit + 1, input.type);
    const rows: EventRow[] = found.map((e) => ({
      id: e.id,
      merchantId: e.merchant_id,
      type: e.type,
      data: e.data,
      createdAt: e.created_at,
      publishedSeq: e.published_seq,
    }));
    // The next page starts after the last sequence returned; there is no cursor in this mode.
    return { items: rows.slice(0, limit), hasMore: rows.length > limit, nextCursor: undefined };
  }
  const cursor = afterCursor(input.cursor);
  const where = {
    $and: [
      { merchantId: input.merchantId },
      ...(input.type !== undefined ? [{ type: input.type }] : []),
      ...(input.createdAfter !== undefined ? [{ createdAt: { $gt: input.createdAfter } }] : []),
      ...(input.objectId !== undefined ? [aboutObject(input.objectId.toLowerCase())] : []),
      ...(Object.keys(cursor).length ? [cursor] : []),
    ],
  } as FilterQuery<EventRow>;
  const rows = await ctx.em.find(Event, where, { orderBy: KEYSET_ORDER, limit: limit + 1 });
  return toPage(rows, limit);
}

/** The expressions of the two indexes of migration 0033: each side of the OR is one index range. */
function aboutObject(id: string) {
  return { $or: [{ [raw("(data->>'id')")]: id }, { [raw("(data->>'subscriptionId')")]: id }] };
}

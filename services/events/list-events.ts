import type { FilterQuery } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../platform/pagination.ts";
import { Event, type EventRow } from "./entities.ts";
import { isEventType } from "./event-types.ts";

export interface ListEventsInput {
  merchantId: string;
  limit?: number | undefined;
  cursor?: string | undefined;
  type?: string | undefined;
  /** Strictly after. */
  createdAfter?: Date | undefined;
}

/** The merchant's own events, newest first: what polling reconciles against. */
export async function listEvents(ctx: UseCaseContext, input: ListEventsInput): Promise<Page<EventRow>> {
  if (input.type !== undefined && !isEventType(input.type)) throw invalid("INVALID_REQUEST", `type: unknown event type ${input.type}`);
  const limit = clampLimit(input.limit);
  const cursor = afterCursor(input.cursor);
  const where = {
    $and: [
      { merchantId: input.merchantId },
      ...(input.type !== undefined ? [{ type: input.type }] : []),
      ...(input.createdAfter !== undefined ? [{ createdAt: { $gt: input.createdAfter } }] : []),
      ...(Object.keys(cursor).length ? [cursor] : []),
    ],
  } as FilterQuery<EventRow>;
  const rows = await ctx.em.find(Event, where, { orderBy: KEYSET_ORDER, limit: limit + 1 });
  return toPage(rows, limit);
}

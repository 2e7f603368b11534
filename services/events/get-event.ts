import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { Event, type EventRow } from "./entities.ts";

/** Another merchant's event is indistinguishable from a missing one. */
export async function getEvent(ctx: UseCaseContext, merchantId: string, id: string): Promise<EventRow> {
  const event = isUuid(id) ? await ctx.em.findOne(Event, { id, merchantId }) : null;
  if (!event) throw notFound("EVENT_NOT_FOUND", `event ${id} not found`);
  return event;
}

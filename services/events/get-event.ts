import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { Event, type EventRow } from "./entities.ts";

/**
 * Another merchant's event is indistinguishable from a missing one, and so is
 * one past retention (its month dropped: ids carry no time, so "gone" cannot
 * be told from "never was"): 404 EVENT_NOT_FOUND, whose message says how long
 * events are kept (RETENTION_EVENTS_DAYS).
 */
export async function getEvent(ctx: UseCaseContext, merchantId: string, id: string, retentionDays: number): Promise<EventRow> {
  const event = isUuid(id) ? await ctx.em.findOne(Event, { id, merchantId }) : null;
  if (!event) throw notFound("EVENT_NOT_FOUND", `event ${id} not found (events are kept for ${retentionDays} days)`);
  return event;
}

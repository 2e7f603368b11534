import { iso } from "../platform/timestamps.ts";
import type { EventRow } from "./entities.ts";

/**
 * The merchant-facing event: the REST representation and, serialized, the
 * webhook body. `data` is the object as it was after the change.
 */
export function eventRecord(event: Pick<EventRow, "id" | "type" | "createdAt" | "data" | "publishedSeq">) {
  return {
    id: event.id,
    object: "event",
    type: event.type,
    createdAt: iso(event.createdAt),
    sequence: event.publishedSeq == null ? null : Number(event.publishedSeq),
    data: event.data,
  };
}

/**
 * The webhook body. It is derived only from the stored row (jsonb returns
 * its keys in one canonical order), so every attempt, redelivery and worker
 * sends the same bytes and the signature covers exactly them.
 */
export function eventBody(event: Pick<EventRow, "id" | "type" | "createdAt" | "data" | "publishedSeq">): string {
  return JSON.stringify(eventRecord(event));
}

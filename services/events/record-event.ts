import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../platform/clock.ts";
import { Event, type EventRow } from "./entities.ts";
import { insertEvents } from "./event-store.ts";
import type { EventType } from "./contract.ts";

interface NewEvent {
  merchantId: string;
  type: EventType;
  data: Record<string, unknown>;
}

/**
 * Adds an event to the unit of work of `em`. Call it inside the transaction
 * that makes the change: both commit together or neither does (outbox).
 */
export function recordEvent(em: EntityManager, clock: Clock, event: NewEvent): EventRow {
  return em.create(Event, {
    id: randomUUID(),
    merchantId: event.merchantId,
    type: event.type,
    data: event.data,
    createdAt: clock.now(),
    relayedAt: null,
  });
}

/**
 * The same rows as recordEvent, for set-based use cases (a sweep that changed
 * hundreds of rows in one statement): one insert statement in the transaction
 * of `em`, now, instead of one managed entity per event (an entity costs more
 * CPU to create, track and flush than the insert costs to run). The events
 * take their sequence in the order given; the commit pokes the relay as a
 * flush of recorded events does. `em` must be the transaction's own entity
 * manager (`transactional`'s argument), so the event commits with the change.
 * The rows are inserted now, while recordEvent's are inserted at the flush:
 * a transaction that uses both gets these first. Inside a nested transaction
 * (a savepoint) the outer commit does not poke: the relay's period finds them.
 */
export async function recordEvents(em: EntityManager, clock: Clock, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  if (!em.isInTransaction()) throw new Error("recordEvents outside a transaction: the events would not commit with the change");
  const createdAt = clock.now().toISOString();
  const rows = events.map((e) => ({ id: randomUUID(), merchant_id: e.merchantId, type: e.type, data: e.data, created_at: createdAt }));
  await insertEvents(em, rows);
}

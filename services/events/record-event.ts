import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../platform/clock.ts";
import { Event, type EventRow } from "./entities.ts";
import { eventsInsert, insertEvents, reserveEventSeqs } from "./event-store.ts";
import { executeWrites, type Write } from "../platform/database/bound-values.ts";
import type { EventType } from "./contract.ts";

interface NewEvent {
  merchantId: string;
  type: EventType;
  data: Record<string, unknown>;
}

/** The events a transaction collects, in the order recorded, and their seq once reserved (reserveCollectedSeqs). */
interface Collection {
  rows: EventRow[];
  seqs: Map<EventRow, string> | undefined;
}

/** Per transaction (its entity manager) collecting its events: collectEvents to writeCollectedEvents. */
const collections = new WeakMap<EntityManager, Collection>();

/**
 * Adds an event to the unit of work of `em`, or to its collection when one is
 * open (collectEvents). Call it inside the transaction that makes the change:
 * both commit together or neither does (outbox). The data is written as it
 * stands at the flush (or writeCollectedEvents), so a caller may still
 * complete it after this call (a version, a receipt number).
 */
export function recordEvent(em: EntityManager, clock: Clock, event: NewEvent): EventRow {
  const collected = collections.get(em);
  if (!collected) return em.create(Event, eventRow(clock, event));
  const plain = eventRow(clock, event);
  if (collected.seqs) throw new Error("recordEvent: this transaction's collected events have their seq reserved already");
  collected.rows.push(plain);
  return plain;
}

/**
 * An event as a plain row, for a use case that writes it with its own statement in its change's transaction (the
 * outbox rule holds: the statement commits with the change): no entity to make and none to track.
 */
export function eventRow(clock: Clock, event: NewEvent): EventRow {
  return { id: randomUUID(), merchantId: event.merchantId, type: event.type, data: event.data, createdAt: clock.now(), publishedSeq: null };
}

/**
 * From now on, recordEvent on `em` (a transaction's own entity manager)
 * collects its events as plain rows instead of managed entities, until
 * writeCollectedEvents inserts them with one statement. For a set-based use
 * case whose domain code records hundreds of events through recordEvent (a
 * renewal set's settle): an entity costs more CPU to create, track and flush
 * than its row costs to insert (tracked-rows.ts says the same of the rows).
 */
export function collectEvents(em: EntityManager): void {
  if (!em.isInTransaction()) throw new Error("collectEvents outside a transaction: the events would not commit with the change");
  if (collections.has(em)) throw new Error("collectEvents: this transaction already collects its events");
  collections.set(em, { rows: [], seqs: undefined });
}

/**
 * Reserves the seq of every event collected on `em` so far, in the order
 * recorded, so that the collection can be inserted in parts
 * (collectedEventsInsert's `only`) with each event in its place in the order:
 * a set inserts the events its receipt numbers do not change before it takes
 * the receipt counters, and only the others under them. Nothing may be
 * recorded on `em` after.
 */
export async function reserveCollectedSeqs(em: EntityManager): Promise<void> {
  const collected = collections.get(em);
  if (!collected) throw new Error("reserveCollectedSeqs: no collection open on this transaction");
  const seqs = await reserveEventSeqs(em, collected.rows.length);
  collected.seqs = new Map(collected.rows.map((row, i) => [row, seqs[i]!]));
}

/** Inserts the events collected on `em` since collectEvents, in the order recorded, and ends the collection. */
export async function writeCollectedEvents(em: EntityManager): Promise<void> {
  await executeWrites(em, [collectedEventsInsert(em)]);
}

/**
 * The write of writeCollectedEvents, for a caller that runs it with others
 * (executeWrites): the collected events not written yet, which ends the
 * collection; or only those `only` accepts (their seq reserved first:
 * reserveCollectedSeqs), and the collection stays open for the rest.
 */
export function collectedEventsInsert(em: EntityManager, only?: (event: EventRow) => boolean): Write {
  const collected = collections.get(em);
  if (!collected) throw new Error("collectedEventsInsert: no collection open on this transaction");
  const { seqs } = collected;
  if (only && !seqs) throw new Error("collectedEventsInsert: a part of the collection is written only with its seq reserved (reserveCollectedSeqs)");
  const now = only ? collected.rows.filter(only) : collected.rows;
  if (only) collected.rows = collected.rows.filter((e) => !only(e));
  else collections.delete(em);
  return eventsInsert(
    em,
    now.map((e) => ({
      id: e.id,
      merchant_id: e.merchantId,
      type: e.type,
      data: e.data,
      created_at: e.createdAt.toISOString(),
      ...(seqs && { seq: seqs.get(e)! }),
    })),
  );
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

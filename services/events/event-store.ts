import type { EntityManager } from "@mikro-orm/postgresql";
import { writtenWithout } from "../platform/database/commit-pokes.ts";
import { executeWrites, type Write } from "../platform/database/bound-values.ts";
import { UTC_MICROS } from "../platform/database/partition-key-range.ts";
import { oldestOf } from "../platform/observability/due-work.ts";
import { Event } from "./entities.ts";

/**
 * The SQL of the events table, its relay's outbox rows and the feed
 * (migration 0038): every statement here runs on the caller's entity manager,
 * so in the caller's transaction.
 */

/** An event row as recordEvents builds it (created_at as ISO text). */
export interface NewEventRow {
  id: string;
  merchant_id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: string;
  /** Reserved beforehand (reserveEventSeqs), or left to the insert: all rows of one insert or none. */
  seq?: string;
}

/** `n` new event seqs, ascending: the places in the order of events inserted later (reserved, so possibly in parts). */
export async function reserveEventSeqs(em: EntityManager, n: number): Promise<string[]> {
  if (n === 0) return [];
  const rows = await em.execute<{ seq: string }[]>(
    "select seq::text as seq from (select nextval('events_seq_seq') as seq from generate_series(1, ?)) s order by s.seq",
    [n],
  );
  return rows.map((r) => r.seq);
}

/**
 * Inserts events in the order given (they take their seq in that order) and
 * pokes the relay at the commit, as a flush of recorded events does: a writer
 * of events never has to remember to wake the relay.
 */
export async function insertEvents(em: EntityManager, rows: readonly NewEventRow[]): Promise<void> {
  await executeWrites(em, [eventsInsert(em, rows)]);
}

/** The write of insertEvents, for a caller that runs it with others (executeWrites); the commit of `em`'s transaction pokes the relay. */
export function eventsInsert(em: EntityManager, rows: readonly NewEventRow[]): Write {
  if (rows.length > 0) writtenWithout(em, Event.meta.className);
  const reserved = rows.filter((r) => r.seq !== undefined).length;
  if (reserved > 0 && reserved !== rows.length) throw new Error("eventsInsert: either every row has its seq reserved or none");
  // The seq column is written only when reserved; otherwise the rows take it from the sequence in the order given.
  const seq = reserved > 0 ? "seq, " : "";
  // One parameter (the rows as JSON) whatever their number: one statement shape, no per-row placeholders; bound, not inlined.
  return {
    sql: `insert into events (id, ${seq}merchant_id, type, data, created_at)
          select id, ${seq}merchant_id, type, data, created_at
            from rows from (jsonb_to_recordset(?::jsonb) as (id uuid, seq bigint, merchant_id uuid, type text, data jsonb, created_at timestamptz))
                 with ordinality as t(id, seq, merchant_id, type, data, created_at, n)
           order by n
          returning 1`,
    values: [JSON.stringify(rows)],
    rows: rows.length,
    what: "events",
  };
}

/**
 * The relay's turn (pg advisory lock `lockId`): true if this transaction took
 * it. Taken per transaction (`pg_try_advisory_xact_lock`, released at commit),
 * never per session: a pooler in transaction mode hands the next transaction
 * to another server session, where a session lock would be neither held nor
 * released.
 */
export async function tryTakeRelayTurn(em: EntityManager, lockId: number): Promise<boolean> {
  const [lock] = await em.execute<{ locked: boolean }[]>("select pg_try_advisory_xact_lock(?) as locked", [lockId]);
  return !!lock?.locked;
}

interface UnrelayedEvent {
  id: string;
  merchant_id: string;
  type: string;
  seq: string;
  /** Fixed-width UTC text, exact to the microsecond (a JS Date keeps milliseconds): it becomes the deliveries' partition key. */
  created_at: string;
}

/**
 * The next events not yet relayed, in seq order: the relay's rows of the
 * outbox (event_outbox, filled by the events' insert trigger, migration 0038),
 * row-locked (`skip locked`: another relay's rows are left to it).
 */
export function lockUnrelayedEvents(em: EntityManager, limit: number): Promise<UnrelayedEvent[]> {
  return em.execute<UnrelayedEvent[]>(
    `select event_id as id, merchant_id, type, seq, to_char(created_at at time zone 'UTC', ${UTC_MICROS}) as created_at
       from event_outbox where consumer = 'relay' order by seq limit ? for update skip locked`,
    [limit],
  );
}

/** An event's place in its merchant's feed: `ord` is 1, 2, 3… per merchant in relay order. */
interface FeedPosition {
  id: string;
  merchant_id: string;
  seq: string;
  /** As lockUnrelayedEvents read it: the partition key. */
  created_at: string;
  ord: number;
}

/**
 * Gives the events their feed positions (event_feed), numbered after each
 * merchant's last one (merchant_feed_heads, raised here: a head outlives the
 * feed months retention drops, so a feed never restarts at 1), and takes
 * them out of the relay's outbox, at `now`.
 * Every one must be found (each is row-locked by this transaction): one
 * missed would leave a gap in its merchant's feed and be relayed again later,
 * out of order; it throws, and the batch rolls back.
 */
export async function markEventsRelayed(em: EntityManager, positions: readonly FeedPosition[], now: Date): Promise<void> {
  // Each merchant's base is read once, before any position is added (read per row, the backward index scan would
  // step over every entry this very statement adds): its head, or the feed's last position if that is further (a
  // relay of the release before merchant_feed_heads may have placed events after the migration), and the head is
  // raised by the batch's count. One relay at a time (relay-events.ts), so nothing moves the head meanwhile.
  const [row] = await em.execute<{ fed: string; dequeued: string; heads: string }[]>(
    `with x as (
           select * from jsonb_to_recordset(?::jsonb) as x(id uuid, merchant_id uuid, created_at timestamptz, ord bigint)
         ), counts as (
           select merchant_id, count(*) as n from x group by merchant_id
         ), bases as materialized (
           select c.merchant_id, c.n,
                  greatest(coalesce(h.last_seq, 0), coalesce((select max(f.published_seq) from event_feed f where f.merchant_id = c.merchant_id), 0)) as base
             from counts c left join merchant_feed_heads h on h.merchant_id = c.merchant_id
         ), heads as (
           insert into merchant_feed_heads (merchant_id, last_seq) select merchant_id, base + n from bases
           on conflict (merchant_id) do update set last_seq = excluded.last_seq
           returning 1
         ), fed as (
           insert into event_feed (merchant_id, published_seq, event_id, event_created_at, relayed_at)
           select x.merchant_id, b.base + x.ord, x.id, x.created_at, ?
             from x join bases b on b.merchant_id = x.merchant_id
           returning 1
         ), dequeued as (
           delete from event_outbox where consumer = 'relay' and seq = any(string_to_array(?, ',')::bigint[])
           returning 1
         )
         select (select count(*) from fed) as fed, (select count(*) from dequeued) as dequeued, (select count(*) from heads) as heads`,
    [JSON.stringify(positions), now, positions.map((p) => p.seq).join(",")],
  );
  const fed = Number(row?.fed);
  const dequeued = Number(row?.dequeued);
  const merchants = new Set(positions.map((p) => p.merchant_id)).size;
  if (fed !== positions.length || dequeued !== positions.length || Number(row?.heads) !== merchants) {
    throw new Error(
      `the relay placed ${fed} and dequeued ${dequeued} of ${positions.length} events it had locked, and raised ${row?.heads} of ${merchants} heads`,
    );
  }
}

/**
 * An event's seq and its created_at as Postgres text: exact (a JS Date keeps
 * milliseconds); it is the partition key of the event's deliveries.
 */
export async function eventSeqAndPartitionKey(em: EntityManager, eventId: string): Promise<{ seq: string; created_at: string } | undefined> {
  const [row] = await em.execute<{ seq: string; created_at: string }[]>("select seq, created_at::text as created_at from events where id = ?", [eventId]);
  return row;
}

/** When the oldest event due at `now` and not yet relayed was recorded (the relay's lag). */
export function oldestUnrelayedEventAt(em: EntityManager, now: Date): Promise<Date | null> {
  return oldestOf(em, "select min(created_at) as oldest from event_outbox where consumer = 'relay' and created_at <= ?", [now]);
}

/** A merchant's event as its feed lists it. */
export interface FeedEvent {
  id: string;
  merchant_id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
  published_seq: string;
}

/**
 * The merchant's feed after position `after`, oldest first: `limit` events,
 * of one type if given. The feed's own index gives the order; each event is
 * one primary-key probe in its month. The probe is a lateral subquery kept
 * apart (`offset 0`): as a plain join, the planner misjudged how many feed
 * rows match and hashed both tables whole (214 ms for a page of 101 on
 * 300,000 events, against 1 ms walking the index).
 */
export async function feedAfter(em: EntityManager, merchantId: string, after: bigint, limit: number, type: string | undefined): Promise<FeedEvent[]> {
  const rows = await em.execute<(Omit<FeedEvent, "created_at"> & { created_at: string })[]>(
    `select e.id, e.merchant_id, e.type, e.data, to_char(e.created_at at time zone 'UTC', ${UTC_MICROS}) as created_at, f.published_seq::text as published_seq
       from event_feed f
       cross join lateral (
         select e.id, e.merchant_id, e.type, e.data, e.created_at from events e
          where e.id = f.event_id and e.created_at = f.event_created_at ${type === undefined ? "" : "and e.type = ?"}
         offset 0
       ) e
      where f.merchant_id = ? and f.published_seq > ?::bigint
      order by f.published_seq
      limit ?`,
    [...(type === undefined ? [] : [type]), merchantId, String(after), limit],
  );
  // A Date, as the ORM hydrates the events' other reads (milliseconds: what the record shows).
  return rows.map((r) => ({ ...r, created_at: new Date(r.created_at) }));
}

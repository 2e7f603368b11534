import { randomUUID } from "node:crypto";
import type { Db } from "./db.ts";

export interface EventTraits {
  merchantId: string;
  type?: string;
  data?: unknown;
  /** When it happened: a time, or this many seconds before the database's now() (now by default). */
  at?: Date;
  secondsAgo?: number;
  /** Passed by the outbox relay (at the event's time). */
  relayed?: boolean;
  /** Looked at by the email collector (at the event's time). */
  emailsCollected?: boolean;
  id?: string;
}

/**
 * An outbox event, written as recordEvent would but without its side effects
 * (no relay poke): the insert queues it for the relay and, for an email type,
 * the email collector (migration 0038's trigger). `relayed` takes it out of
 * the relay's queue and gives it the merchant's next feed position;
 * `emailsCollected` takes it out of the collector's.
 */
export async function event(db: Db, traits: EventTraits): Promise<{ id: string }> {
  const [row] = await db.sql<{ id: string }>(
    `insert into events (id, merchant_id, type, data, created_at)
     select ?, ?, ?, ?::jsonb, t.at
     from (select coalesce(?::timestamptz, now() - make_interval(secs => ?)) as at) t
     returning id`,
    [traits.id ?? randomUUID(), traits.merchantId, traits.type ?? "plan.created", JSON.stringify(traits.data ?? {}), traits.at ?? null, traits.secondsAgo ?? 0],
  );
  const id = row!.id;
  if (traits.relayed) {
    await db.sql(
      `with passed as (delete from event_outbox where consumer = 'relay' and event_id = ? returning event_id, created_at, merchant_id),
       head as (
         insert into merchant_feed_heads (merchant_id, last_seq) select merchant_id, 1 from passed
         on conflict (merchant_id) do update set last_seq = merchant_feed_heads.last_seq + 1
         returning merchant_id, last_seq)
       insert into event_feed (merchant_id, published_seq, event_id, event_created_at, relayed_at)
       select p.merchant_id, h.last_seq, p.event_id, p.created_at, p.created_at
         from passed p join head h on h.merchant_id = p.merchant_id`,
      [id],
    );
  }
  if (traits.emailsCollected) await db.sql("delete from event_outbox where consumer = 'emails' and event_id = ?", [id]);
  return { id };
}

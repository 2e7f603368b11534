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

/** An outbox event, written as recordEvent would but without its side effects (no relay poke). */
export async function event(db: Db, traits: EventTraits): Promise<{ id: string }> {
  const [row] = await db.sql<{ id: string }>(
    `insert into events (id, merchant_id, type, data, created_at, relayed_at, emails_collected_at)
     select ?, ?, ?, ?::jsonb, t.at, case when ? then t.at end, case when ? then t.at end
     from (select coalesce(?::timestamptz, now() - make_interval(secs => ?)) as at) t
     returning id`,
    [
      traits.id ?? randomUUID(),
      traits.merchantId,
      traits.type ?? "plan.created",
      JSON.stringify(traits.data ?? {}),
      traits.relayed ?? false,
      traits.emailsCollected ?? false,
      traits.at ?? null,
      traits.secondsAgo ?? 0,
    ],
  );
  return { id: row!.id };
}

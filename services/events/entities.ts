import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * The merchant-facing event log: an event row is written once, in the same
 * transaction as the state change it describes, and never changed. `seq` is a
 * bigserial giving a total order for the relay and for per-endpoint ordering.
 * Its insert also queues it for its consumers (event_outbox, filled by a
 * trigger: migration 0038); the relay gives it its feed position
 * (event_feed).
 */
export const Event = defineEntity({
  name: "Event",
  tableName: "events",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    type: p.string().length(100),
    data: p.json<Record<string, unknown>>(),
    createdAt: p.datetime(),
    /** Position in the merchant-visible feed, given by the relay in commit order (event_feed, 0038); null until relayed. Read, never written, here. */
    publishedSeq: p
      .bigint("string")
      .formula((cols) => `(select f.published_seq from event_feed f where f.event_id = ${cols}.id and f.event_created_at = ${cols}.created_at)`)
      .persist(false)
      .nullable(),
  },
});

export type EventRow = InferEntity<typeof Event>;

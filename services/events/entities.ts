import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * The outbox and the merchant-facing event log are one table: an event row is
 * written in the same transaction as the state change it describes. `seq` is a
 * bigserial giving a total order for the relay and for per-endpoint ordering.
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
    relayedAt: p.datetime().nullable(),
    /** Position in the merchant-visible feed, given by the relay in commit order (0008). */
    publishedSeq: p.bigint("string").nullable(),
  },
});

export type EventRow = InferEntity<typeof Event>;

import { DELIVERY_STATUSES } from "../events/contract.ts";
import { sqlStatus } from "../platform/status-machine.ts";
import type { NeededCondition } from "../platform/database/monthly-partitions.ts";

/**
 * The retention sweep's "still needed" conditions, as SQL on a row `r` of a
 * retained table (retention-registry.ts says which table keeps which): any
 * of them true keeps the row's month. Each is asked on its own, so each can
 * use its own partial index.
 */

/** A delivery's open status, from the events contract's list (the machine itself is that domain's own). */
const PENDING_DELIVERY = sqlStatus(DELIVERY_STATUSES, "PENDING");

/** The attempt a worker is making. */
export const ATTEMPT_IN_PROGRESS = "r.outcome = 'IN_PROGRESS'";

/** The history of a delivery still being retried. */
export const ATTEMPT_OF_PENDING_DELIVERY = `exists (select 1 from webhook_deliveries d where d.id = r.delivery_id and d.event_created_at = r.event_created_at and d.status = ${PENDING_DELIVERY})`;

/** A delivery still to be made or retried. */
export const DELIVERY_PENDING = `r.status = ${PENDING_DELIVERY}`;

/**
 * An event a consumer has still to handle: not yet relayed (no deliveries made), or its customer emails not yet
 * collected (event_outbox, 0038). For a month, one look at the queue for its range (the queue keeps each event's
 * created_at, the month's partition key): work in proportion to the queue, which the consumers keep short. Asked row
 * by row, the planner hashed the whole month against the queue (364 ms for a 2M-row month, the second time under the
 * table's exclusive lock, with every insert of an event waiting behind it). Row by row only for the default
 * partition's strays.
 */
export const EVENT_QUEUED: NeededCondition = {
  row: "exists (select 1 from event_outbox o where o.event_id = r.id and o.created_at = r.created_at)",
  month: "select 1 from event_outbox o where o.created_at >= ?::timestamptz and o.created_at < ?::timestamptz",
};

/** An event being delivered. */
export const EVENT_BEING_DELIVERED = `exists (select 1 from webhook_deliveries d where d.event_id = r.id and d.event_created_at = r.created_at and d.status = ${PENDING_DELIVERY})`;

/** The feed position of an event being delivered (its webhook body carries the position). */
export const FEED_EVENT_BEING_DELIVERED = `exists (select 1 from webhook_deliveries d where d.event_id = r.event_id and d.event_created_at = r.event_created_at and d.status = ${PENDING_DELIVERY})`;

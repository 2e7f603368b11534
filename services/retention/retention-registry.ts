import type { Retention } from "../platform/config.ts";
import type { MonthlyPartitionedTable, NeededCondition } from "../platform/database/monthly-partitions.ts";
import {
  ATTEMPT_IN_PROGRESS,
  ATTEMPT_OF_PENDING_DELIVERY,
  DELIVERY_PENDING,
  EVENT_BEING_DELIVERED,
  EVENT_QUEUED,
  FEED_EVENT_BEING_DELIVERED,
} from "./retention-store.ts";

/**
 * A table kept by the retention sweep: partitioned by month on `column`
 * (platform/database/monthly-partitions.ts), each month dropped once all of it
 * is older than `retentionDays` and none of its rows is still needed.
 */
export interface RetainedTable extends MonthlyPartitionedTable {
  /** Days a row is kept at least (a RETENTION_* setting). */
  retentionDays(retention: Retention): number;
  /**
   * SQL conditions on a row `r` (retention-store.ts; NeededCondition), any of which keeps its month: work still to
   * do on it. Each is asked on its own (so each can use its own partial
   * index), again under the table's exclusive lock right before the drop.
   */
  readonly neededRows: readonly NeededCondition[];
}

/**
 * Dependents first: attempts and deliveries go no later than their events
 * (config refuses RETENTION_WEBHOOK_DELIVERIES_DAYS > RETENTION_EVENTS_DAYS),
 * because a pending delivery is sent from its event's row; the feed
 * positions (event_feed) are kept as long as the events, and go first.
 *
 * What retention never touches: the ledger, charges, payouts, orders and
 * refunds (money records, kept for good), customer_emails, and
 * reconciliation_anomalies. Reconciliation and the ledger check read only
 * those, except the PAYOUT_PAID_TWICE check, which also counts payout.paid
 * events: an anomaly is recorded when first seen (every
 * RECONCILE_INTERVAL_MS, at most a day), far inside the events' 7-day minimum,
 * and dropping events can only take duplicates away, never add an anomaly.
 *
 * The audit log is kept whole months at a time like the others; nothing in
 * it is ever needed by other work (its trigger lets only this sweep, under
 * the table's advisory lock, delete default-partition strays).
 */
export const RETAINED_TABLES: readonly RetainedTable[] = [
  {
    table: "webhook_delivery_attempts",
    column: "event_created_at",
    retentionDays: (r) => r.webhookDeliveriesDays,
    // The attempt a worker is making, and the history of a delivery still being retried.
    neededRows: [ATTEMPT_IN_PROGRESS, ATTEMPT_OF_PENDING_DELIVERY],
  },
  {
    table: "webhook_deliveries",
    column: "event_created_at",
    storage: "fillfactor = 80",
    retentionDays: (r) => r.webhookDeliveriesDays,
    neededRows: [DELIVERY_PENDING],
  },
  {
    table: "event_feed",
    column: "event_created_at",
    retentionDays: (r) => r.eventsDays,
    // A pending delivery's body carries its event's feed position.
    neededRows: [FEED_EVENT_BEING_DELIVERED],
  },
  {
    table: "events",
    column: "created_at",
    retentionDays: (r) => r.eventsDays,
    // Still queued for a consumer (one look at the queue for the month), or being delivered (a partial index serves it).
    neededRows: [EVENT_QUEUED, EVENT_BEING_DELIVERED],
  },
  { table: "audit_entries", column: "at", retentionDays: (r) => r.auditEntriesDays, neededRows: [] },
];

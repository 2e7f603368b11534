import type { Retention } from "../platform/config.ts";
import type { MonthlyPartitionedTable } from "../platform/database/monthly-partitions.ts";
import { EMAIL_EVENT_TYPES } from "../emails/contract.ts";

/**
 * A table kept by the retention sweep: partitioned by month on `column`
 * (platform/database/monthly-partitions.ts), each month dropped once all of it
 * is older than `retentionDays` and none of its rows is still needed.
 */
export interface RetainedTable extends MonthlyPartitionedTable {
  /** Days a row is kept at least (a RETENTION_* setting). */
  retentionDays(retention: Retention): number;
  /**
   * SQL condition on a row `r` that keeps its month: work still to do on it.
   * Checked under the month's exclusive lock, right before the drop.
   */
  readonly neededRows: string;
}

const pendingDelivery = "select d.id from webhook_deliveries d where d.status = 'PENDING'";

/**
 * Dependents first: attempts and deliveries go no later than their events
 * (config refuses RETENTION_WEBHOOK_DELIVERIES_DAYS > RETENTION_EVENTS_DAYS),
 * because a pending delivery is sent from its event's row.
 *
 * What retention never touches: the ledger, charges, payouts, orders and
 * refunds (money records, kept for good), customer_emails, and
 * reconciliation_anomalies. Reconciliation and the ledger check read only
 * those, except the PAYOUT_PAID_TWICE check, which also counts payout.paid
 * events: an anomaly is recorded when first seen (every
 * RECONCILE_INTERVAL_MS, at most a day), far inside the events' 7-day minimum,
 * and dropping events can only take duplicates away, never add an anomaly.
 *
 * The audit log registers itself here in one line once its table exists
 * (created with monthlyPartitionedTableSql):
 *   { table: "audit_entries", column: "at", retentionDays: (r) => r.auditEntriesDays, neededRows: "false" },
 */
export const RETAINED_TABLES: readonly RetainedTable[] = [
  {
    table: "webhook_delivery_attempts",
    column: "event_created_at",
    retentionDays: (r) => r.webhookDeliveriesDays,
    // The attempt a worker is making, and the history of a delivery still being retried.
    neededRows: `r.outcome = 'IN_PROGRESS' or r.delivery_id in (${pendingDelivery})`,
  },
  {
    table: "webhook_deliveries",
    column: "event_created_at",
    storage: "fillfactor = 80",
    retentionDays: (r) => r.webhookDeliveriesDays,
    neededRows: "r.status = 'PENDING'",
  },
  {
    table: "events",
    column: "created_at",
    retentionDays: (r) => r.eventsDays,
    // Not yet relayed (no deliveries made), emails not yet collected, or being delivered.
    neededRows:
      `r.relayed_at is null` +
      ` or (r.emails_collected_at is null and r.type in (${EMAIL_EVENT_TYPES.map((t) => `'${t}'`).join(", ")}))` +
      ` or r.id in (select d.event_id from webhook_deliveries d where d.status = 'PENDING')`,
  },
];

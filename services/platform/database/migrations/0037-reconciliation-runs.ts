import { Migration } from "@mikro-orm/migrations";

/**
 * Incremental reconciliation (services/reconciliation/reconciliation-window-store.ts).
 *
 * reconciliation_runs: one row per finished run, with where it stood in both
 * clocks (database time and service time, which a sandbox clock moves) and
 * where the next run may start. Small (a row every RECONCILE_INTERVAL_MS, a
 * month kept) and read only by its newest rows.
 *
 * BRIN indexes on created_at of the owners a run looks up by time: these
 * tables are appended in time order, so a block range index answers "created
 * since" for a few pages and costs next to nothing on the insert path (a
 * btree would be one more index on the renewals' hottest table).
 * ledger_transactions already has a btree on created_at.
 */
export class Migration0037ReconciliationRuns extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table reconciliation_runs (
        id uuid primary key,
        scope varchar(16) not null check (scope in ('INCREMENTAL','FULL')),
        -- The first created_at this run checked (null: all history).
        since timestamptz,
        -- Database time when the run took its snapshot, and the service time then.
        started_at timestamptz not null,
        service_started_at timestamptz not null,
        -- Where a later run may start: the service time of a run at least one overlap older, held back by rows still in flight.
        next_since timestamptz,
        finished_at timestamptz not null,
        checked integer not null,
        anomalies integer not null
      );
      create index reconciliation_runs_started_idx on reconciliation_runs (started_at desc);
      create index subscription_charges_created_brin on subscription_charges using brin (created_at);
      create index subscription_refunds_created_brin on subscription_refunds using brin (created_at);
      create index payment_order_credits_created_brin on payment_order_credits using brin (created_at);
    `);
  }
}

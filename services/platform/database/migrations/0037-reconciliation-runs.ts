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
 *
 * Plain (not concurrent) index builds, in the migration's transaction: they
 * hold writes to those tables for the build (a BRIN is one pass over the
 * table, the other two are small); CHANGELOG says so for an upgrade.
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
        -- Null while the run goes on, or if it never finished (a timeout): such a run leaves no start.
        finished_at timestamptz,
        checked integer,
        anomalies integer
      );
      create index reconciliation_runs_started_idx on reconciliation_runs (started_at desc);
      create index subscription_charges_created_brin on subscription_charges using brin (created_at);
      create index subscription_refunds_created_brin on subscription_refunds using brin (created_at);
      create index payment_order_credits_created_brin on payment_order_credits using brin (created_at);
      -- Every run checks the owners of recorded anomalies, and leaves rows with one out of its in-flight bound.
      create index reconciliation_anomalies_owner_idx on reconciliation_anomalies (owner_type, owner_id);
      -- PAYOUT_PAID_TWICE counts payout.paid events per payout: these few rows, not every event.
      create index events_payout_paid_idx on events ((data->>'id')) where type = 'payout.paid';
    `);
  }
}

import { Migration } from "@mikro-orm/migrations";

/**
 * Faults production sees (issue 15):
 *  - a fencing token on every charge lease: a settle commits only while the
 *    row still carries the generation its holder took (charges/lease.ts);
 *  - back-off for retried rows: attempts, next try, and a parked state that
 *    stops a row that keeps failing from blocking newer ones;
 *  - reconciliation anomalies, recorded once each.
 */
export class Migration0013ReconciliationAndBackoff extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table subscription_charges
        add column lease_generation integer not null default 0,
        add column settle_failures integer not null default 0,
        add column next_settle_at timestamptz,
        add column parked_at timestamptz;
      create index subscription_charges_stale_idx on subscription_charges (next_settle_at nulls first, created_at)
        where status = 'PENDING' and parked_at is null;

      alter table payment_order_credits
        add column next_attempt_at timestamptz,
        add column parked_at timestamptz;
      create index payment_order_credits_retry_idx on payment_order_credits (next_attempt_at nulls first, created_at)
        where status = 'PENDING' and parked_at is null;

      create table reconciliation_anomalies (
        id uuid primary key,
        kind varchar(40) not null check (kind in (
          'MONEY_WITHOUT_SUCCEEDED_OWNER','SUCCEEDED_OWNER_WITHOUT_MONEY','AMOUNT_MISMATCH','PARKED_ROW')),
        -- What should own the money: subscription_charge or order_credit, and its id.
        owner_type varchar(32) not null,
        owner_id varchar(100) not null,
        wallet_transaction_id varchar(100),
        details jsonb not null default '{}',
        detected_at timestamptz not null,
        -- Recorded once: a later run that sees the same mismatch adds nothing.
        constraint reconciliation_anomalies_once unique (kind, owner_type, owner_id)
      );
      create index reconciliation_anomalies_detected_idx on reconciliation_anomalies (detected_at desc);
    `);
  }
}

import { Migration } from "@mikro-orm/migrations";

/**
 * One protocol for every wallet call (services/platform/wallet-calls/):
 * subscription charges, refunds and order credits carry the same in-flight
 * columns (lease and fencing generation, failures with back-off, parked,
 * the last error), so one module leases, fences, backs off, parks and sweeps
 * all three. Credits' `attempts` counted successes too; as `settle_failures`
 * it counts failed tries only, like the others. Charges gain `purpose`: what
 * a settled charge pays for is dispatched on it, not guessed from the
 * subscription's state.
 */
export class Migration0022WalletCallProtocol extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table subscription_charges
        add column last_error varchar(500),
        add column purpose varchar(16);
      update subscription_charges c set purpose = case
          when c.change_session_id is not null then 'PLAN_CHANGE'
          when c.period_index = 0 and exists (select 1 from subscriptions s where s.id = c.subscription_id
                                                and (s.activated_at is null or c.created_at <= s.activated_at)) then 'FIRST_PAYMENT'
          else 'RENEWAL' end;
      alter table subscription_charges
        alter column purpose set not null,
        add constraint subscription_charges_purpose check (purpose in ('FIRST_PAYMENT','RENEWAL','PLAN_CHANGE')
          and (purpose = 'PLAN_CHANGE') = (change_session_id is not null));

      alter table subscription_refunds
        add column settle_failures integer not null default 0,
        add column next_settle_at timestamptz,
        add column parked_at timestamptz,
        add column last_error varchar(500),
        -- an automatic refund (money the service owes back): a low merchant balance retries it, never fails it
        add column owed boolean not null default false;
      drop index if exists subscription_refunds_pending_idx;
      create index subscription_refunds_stale_idx on subscription_refunds (next_settle_at nulls first, created_at)
        where status = 'PENDING' and parked_at is null;

      alter table payment_order_credits rename column next_attempt_at to next_settle_at;
      alter table payment_order_credits rename column attempts to settle_failures;
      update payment_order_credits set settle_failures = greatest(settle_failures - 1, 0) where status = 'DONE';
      alter table payment_order_credits
        add column lease_until timestamptz,
        add column lease_generation integer not null default 0;
      alter index payment_order_credits_retry_idx rename to payment_order_credits_stale_idx;

      alter table reconciliation_anomalies drop constraint if exists reconciliation_anomalies_kind_check;
      alter table reconciliation_anomalies add constraint reconciliation_anomalies_kind_check check (kind in (
        'MONEY_WITHOUT_SUCCEEDED_OWNER','SUCCEEDED_OWNER_WITHOUT_MONEY','AMOUNT_MISMATCH','PARKED_ROW',
        'STALE_PENDING_ROW','CHARGE_WITHOUT_BILLED_PERIOD'));
    `);
  }
}

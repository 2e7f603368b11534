import { Migration } from "@mikro-orm/migrations";

/**
 * Plan change sessions (customer-approved plan changes) and the link from a
 * charge to the change session it paid for.
 *
 * The database enforces what concurrency could otherwise break: at most one
 * session awaiting approval and at most one scheduled change per
 * subscription, a token that names one session, and, for immediate charges,
 * one successful charge and one attempt in flight per session.
 *
 * Immediate charges are rows of subscription_charges (same PENDING → wallet
 * → settle path as the first payment, same idempotency-key scheme) marked by
 * change_session_id. They are not period charges: the per-period uniqueness
 * rules of 0003 are narrowed to rows without change_session_id, so an
 * immediate charge never takes the slot of a period's renewal.
 */
export class Migration0007ChangeSessions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table subscription_change_sessions (
        id uuid primary key,
        subscription_id uuid not null references subscriptions(id),
        merchant_id uuid not null references merchants(id),
        -- SHA-256 (hex) of the token in the approval URL; the token itself is never stored.
        token_hash varchar(64) not null unique,
        status varchar(32) not null constraint subscription_change_sessions_status_check
          check (status in ('PENDING_APPROVAL','SCHEDULED','APPLIED','DECLINED','EXPIRED','CANCELLED')),
        current_plan_id uuid not null references plans(id),
        current_interval varchar(8) not null,
        current_interval_count integer not null check (current_interval_count >= 1),
        requested_plan_id uuid not null references plans(id),
        -- The requested plan's terms as the customer approved them (plans are read from the catalog service at create).
        requested_amount numeric(38,18) not null check (requested_amount >= 0),
        requested_currency varchar(16) not null,
        requested_interval varchar(8) not null,
        requested_interval_count integer not null check (requested_interval_count >= 1),
        effective_mode varchar(16) not null check (effective_mode in ('IMMEDIATE','NEXT_BILLING')),
        -- In the requested plan's currency; only an IMMEDIATE change can charge at approval.
        immediate_charge_amount numeric(38,18) not null default 0 check (immediate_charge_amount >= 0),
        success_url varchar(2048) not null,
        cancel_url varchar(2048) not null,
        reason varchar(1000),
        metadata jsonb not null default '{}',
        expires_at timestamptz not null,
        scheduled_for timestamptz,
        cancellation_reason varchar(32) check (cancellation_reason in ('SUBSCRIPTION_CANCELLED','SUPERSEDED')),
        superseded_by uuid references subscription_change_sessions(id),
        charge_id uuid,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        approved_at timestamptz,
        applied_at timestamptz,
        declined_at timestamptz,
        expired_at timestamptz,
        cancelled_at timestamptz,
        constraint subscription_change_sessions_charge_mode
          check (effective_mode = 'IMMEDIATE' or immediate_charge_amount = 0),
        constraint subscription_change_sessions_scheduled
          check (status <> 'SCHEDULED' or scheduled_for is not null),
        constraint subscription_change_sessions_not_same_plan check (requested_plan_id <> current_plan_id)
      );
      -- One session awaiting the customer per subscription (409 CHANGE_SESSION_ALREADY_OPEN), one scheduled change.
      create unique index subscription_change_sessions_one_open_key on subscription_change_sessions (subscription_id)
        where status = 'PENDING_APPROVAL';
      create unique index subscription_change_sessions_one_scheduled_key on subscription_change_sessions (subscription_id)
        where status = 'SCHEDULED';
      create index subscription_change_sessions_subscription_idx
        on subscription_change_sessions (subscription_id, created_at desc, id desc);
      -- The sweeps: sessions awaiting approval by expiry, scheduled changes by due time.
      create index subscription_change_sessions_pending_idx on subscription_change_sessions (expires_at)
        where status = 'PENDING_APPROVAL';
      create index subscription_change_sessions_scheduled_idx on subscription_change_sessions (scheduled_for)
        where status = 'SCHEDULED';

      alter table subscription_charges add column change_session_id uuid references subscription_change_sessions(id);

      drop index subscription_charges_one_success_key;
      create unique index subscription_charges_one_success_key on subscription_charges (subscription_id, period_index)
        where status = 'SUCCEEDED' and change_session_id is null;
      drop index subscription_charges_one_pending_key;
      create unique index subscription_charges_one_pending_key on subscription_charges (subscription_id, period_index)
        where status = 'PENDING' and change_session_id is null;
      alter table subscription_charges drop constraint subscription_charges_subscription_id_period_index_attempt_key;
      create unique index subscription_charges_period_attempt_key on subscription_charges (subscription_id, period_index, attempt)
        where change_session_id is null;

      create unique index subscription_charges_change_attempt_key on subscription_charges (change_session_id, attempt)
        where change_session_id is not null;
      create unique index subscription_charges_change_success_key on subscription_charges (change_session_id)
        where status = 'SUCCEEDED' and change_session_id is not null;
      create unique index subscription_charges_change_pending_key on subscription_charges (change_session_id)
        where status = 'PENDING' and change_session_id is not null;
    `);
  }
}

import { Migration } from "@mikro-orm/migrations";

/**
 * Subscriptions, their customer authorizations and their charges. The
 * database enforces what concurrency could otherwise break: one live
 * subscription per (merchant, externalReference), one successful charge per
 * billing period, at most one charge in flight per period, and a token that
 * names one authorization. wallet_user_id and funding_asset name the wallet's
 * objects but carry no foreign key: the wallet owns its tables.
 */
export class Migration0003Subscriptions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table subscriptions (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        plan_id uuid not null references plans(id),
        wallet_user_id uuid not null,
        customer_email varchar(254),
        external_reference varchar(200) not null,
        service_reference varchar(200),
        success_url varchar(2048) not null,
        cancel_url varchar(2048) not null,
        metadata jsonb not null default '{}',
        -- PAST_DUE and UNPAID belong to recurring billing (dunning); declared here so its migration only adds behaviour.
        status varchar(32) not null constraint subscriptions_status_check
          check (status in ('PENDING_APPROVAL','ACTIVE','TRIALING','PAUSED','PAST_DUE','UNPAID','CANCELLED','EXPIRED')),
        paused_from_status varchar(32),
        cancellation_reason varchar(64),
        funding_asset varchar(16),
        -- Periods are computed from the anchor (first billing date) so month ends do not drift.
        billing_anchor timestamptz,
        current_period_start timestamptz,
        current_period_end timestamptz,
        next_billing_at timestamptz,
        trial_end timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        activated_at timestamptz,
        paused_at timestamptz,
        cancelled_at timestamptz,
        expired_at timestamptz,
        constraint subscriptions_paused_from check ((status = 'PAUSED') = (paused_from_status is not null))
      );
      -- externalReference is unique among a merchant's live subscriptions; a cancelled or expired one frees it.
      create unique index subscriptions_merchant_external_live_key on subscriptions (merchant_id, external_reference)
        where status not in ('CANCELLED','EXPIRED');
      create index subscriptions_merchant_created_idx on subscriptions (merchant_id, created_at desc, id desc);
      create index subscriptions_merchant_plan_idx on subscriptions (merchant_id, plan_id, created_at desc, id desc);
      create index subscriptions_merchant_wallet_user_idx on subscriptions (merchant_id, wallet_user_id, created_at desc, id desc);
      -- What renewals look for: live subscriptions by due time.
      create index subscriptions_next_billing_idx on subscriptions (next_billing_at)
        where status in ('ACTIVE','TRIALING','PAST_DUE');

      create table subscription_authorizations (
        id uuid primary key,
        subscription_id uuid not null references subscriptions(id),
        merchant_id uuid not null references merchants(id),
        -- SHA-256 (hex) of the token in the authorization URL; the token itself is never stored.
        token_hash varchar(64) not null unique,
        status varchar(16) not null check (status in ('PENDING','APPROVED','DECLINED','EXPIRED','CANCELLED')),
        expires_at timestamptz not null,
        approved_at timestamptz,
        declined_at timestamptz,
        expired_at timestamptz,
        -- Set once the token has been consumed (approved or declined): single use.
        used_at timestamptz,
        approved_wallet_user_id uuid,
        funding_asset varchar(16),
        created_at timestamptz not null
      );
      create index subscription_authorizations_subscription_idx on subscription_authorizations (subscription_id, created_at desc);
      -- The expiry sweep: pending authorizations by due time.
      create index subscription_authorizations_pending_idx on subscription_authorizations (expires_at) where status = 'PENDING';

      -- One row per charge attempt. A PENDING row is written (and committed)
      -- before the wallet is asked to move money, with its id as the wallet's
      -- idempotency key: a crash in between is finished by a sweep that
      -- repeats the same call, so the customer is never debited twice.
      create table subscription_charges (
        id uuid primary key,
        subscription_id uuid not null references subscriptions(id),
        merchant_id uuid not null references merchants(id),
        wallet_user_id uuid not null,
        period_index integer not null check (period_index >= 0),
        period_start timestamptz not null,
        period_end timestamptz not null check (period_end > period_start),
        amount numeric(38,18) not null check (amount >= 0),
        currency varchar(16) not null,
        asset varchar(16) not null,
        asset_amount numeric(38,18),
        -- Asset units per currency unit; unconstrained scale (small prices need many digits).
        rate numeric,
        status varchar(16) not null check (status in ('PENDING','SUCCEEDED','FAILED')),
        failure_reason varchar(64),
        attempt integer not null check (attempt >= 1),
        wallet_transaction_id varchar(64),
        created_at timestamptz not null,
        settled_at timestamptz,
        -- Lease (database time) held by whoever is calling the wallet for this row; a
        -- sweep takes over only after it ran out, so one key is never in two calls at once.
        lease_until timestamptz,
        unique (subscription_id, period_index, attempt),
        constraint subscription_charges_failure_reason check ((status = 'FAILED') = (failure_reason is not null))
      );
      -- Exactly once: one successful charge per period, and one attempt in flight per period.
      create unique index subscription_charges_one_success_key on subscription_charges (subscription_id, period_index)
        where status = 'SUCCEEDED';
      create unique index subscription_charges_one_pending_key on subscription_charges (subscription_id, period_index)
        where status = 'PENDING';
      create index subscription_charges_subscription_idx on subscription_charges (subscription_id, created_at desc, id desc);
      create index subscription_charges_pending_idx on subscription_charges (created_at) where status = 'PENDING';
    `);
  }
}

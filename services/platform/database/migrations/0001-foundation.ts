import { Migration } from "@mikro-orm/migrations";

/** Merchants, API keys, plans, the event outbox and the sandbox clock. */
export class Migration0001Foundation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table merchants (
        id uuid primary key,
        name varchar(200) not null,
        created_at timestamptz not null
      );
      create table api_keys (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        prefix varchar(32) not null,
        key_hash varchar(64) not null unique,
        created_at timestamptz not null,
        revoked_at timestamptz
      );
      create index api_keys_merchant_idx on api_keys (merchant_id);

      create table plans (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        external_reference varchar(200),
        name varchar(200) not null,
        description text,
        amount numeric(38,18) not null check (amount >= 0),
        currency varchar(16) not null,
        interval varchar(8) not null check (interval in ('DAY','WEEK','MONTH','YEAR')),
        interval_count integer not null check (interval_count between 1 and 365),
        trial_days integer not null check (trial_days between 0 and 365),
        maximum_charge_amount numeric(38,18),
        metadata jsonb not null default '{}',
        status varchar(16) not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      -- Keyset pagination: newest first, id breaks ties.
      create index plans_merchant_created_idx on plans (merchant_id, created_at desc, id desc);

      create table events (
        id uuid primary key,
        seq bigserial not null unique,
        merchant_id uuid not null references merchants(id),
        type varchar(100) not null,
        data jsonb not null,
        created_at timestamptz not null,
        relayed_at timestamptz
      );
      create index events_merchant_created_idx on events (merchant_id, created_at desc, id desc);
      create index events_unrelayed_idx on events (seq) where relayed_at is null;

      create table sandbox_clock (
        id smallint primary key default 1 check (id = 1),
        offset_ms bigint not null default 0
      );
      insert into sandbox_clock (id, offset_ms) values (1, 0);
    `);
  }
}

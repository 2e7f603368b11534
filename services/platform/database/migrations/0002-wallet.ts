import { Migration } from "@mikro-orm/migrations";

/**
 * Wallet users and the double-entry ledger. The database itself enforces the
 * money rules the code relies on: entries are immutable, a user's or
 * merchant's cached balance can never go below zero, and an idempotency key
 * names at most one ledger transaction.
 */
export class Migration0002Wallet extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table wallet_users (
        id uuid primary key,
        -- Stored lower-cased: uniqueness is case-insensitive by construction.
        email varchar(254) not null unique check (email = lower(email)),
        password_hash text not null,
        pin_hash text not null,
        status varchar(16) not null check (status in ('ACTIVE','FROZEN')),
        pin_failed_attempts integer not null default 0 check (pin_failed_attempts >= 0),
        pin_locked_until timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );

      -- Failed logins per (normalized) email in a fixed window; unknown emails are counted too.
      create table wallet_login_throttles (
        email varchar(254) primary key,
        window_started_at timestamptz not null,
        failures integer not null check (failures >= 0)
      );

      -- One account per (owner, asset); SYSTEM accounts (money entering from outside) have a code instead of an owner.
      create table ledger_accounts (
        id uuid primary key,
        owner_type varchar(16) not null check (owner_type in ('WALLET_USER','MERCHANT','SYSTEM')),
        owner_id uuid,
        system_code varchar(40),
        asset varchar(16) not null,
        balance numeric(38,18) not null default 0,
        frozen boolean not null default false,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        constraint ledger_accounts_owner_shape check ((owner_type = 'SYSTEM') = (owner_id is null) and (owner_type = 'SYSTEM') = (system_code is not null)),
        -- System accounts mirror the outside world and may go negative; nobody else may.
        constraint ledger_accounts_balance_non_negative check (owner_type = 'SYSTEM' or balance >= 0)
      );
      create unique index ledger_accounts_owner_asset_key on ledger_accounts (owner_type, owner_id, asset) where owner_id is not null;
      create unique index ledger_accounts_system_asset_key on ledger_accounts (system_code, asset) where system_code is not null;

      create table ledger_transactions (
        id uuid primary key,
        idempotency_key varchar(200) unique,
        kind varchar(32) not null check (kind in ('WALLET_CREDIT','CHARGE','MERCHANT_CREDIT')),
        asset varchar(16) not null,
        amount numeric(38,18) not null check (amount > 0),
        -- The parties, denormalized so a retry can be compared with the first request.
        wallet_user_id uuid,
        merchant_id uuid,
        description varchar(500),
        created_at timestamptz not null
      );
      create index ledger_transactions_created_idx on ledger_transactions (created_at desc, id desc);

      create table ledger_entries (
        id uuid primary key,
        transaction_id uuid not null references ledger_transactions(id),
        account_id uuid not null references ledger_accounts(id),
        asset varchar(16) not null,
        -- Signed: negative leaves the account, positive enters it; the legs of a transaction sum to zero.
        amount numeric(38,18) not null check (amount <> 0),
        balance_after numeric(38,18) not null,
        created_at timestamptz not null
      );
      create index ledger_entries_transaction_idx on ledger_entries (transaction_id);
      create index ledger_entries_account_idx on ledger_entries (account_id, created_at);

      -- The ledger is append-only: a correction is a new transaction, never an edit.
      create function ledger_forbid_change() returns trigger language plpgsql as $$
      begin
        raise exception 'ledger rows are immutable (% on %)', tg_op, tg_table_name;
      end
      $$;
      create trigger ledger_transactions_immutable before update or delete on ledger_transactions
        for each row execute function ledger_forbid_change();
      create trigger ledger_entries_immutable before update or delete on ledger_entries
        for each row execute function ledger_forbid_change();

      -- Every charge attempt, refused ones included (audit trail). Only a SUCCEEDED one is final:
      -- the ledger transaction with the same idempotency key is what a retry replays.
      create table wallet_charge_attempts (
        id uuid primary key,
        idempotency_key varchar(200) not null,
        wallet_user_id uuid not null references wallet_users(id),
        merchant_id uuid not null,
        asset varchar(16) not null,
        amount numeric(38,18) not null,
        outcome varchar(32) not null check (outcome in ('SUCCEEDED','INSUFFICIENT_FUNDS','ACCOUNT_FROZEN')),
        balance_after numeric(38,18) not null,
        transaction_id uuid references ledger_transactions(id),
        created_at timestamptz not null,
        check ((outcome = 'SUCCEEDED') = (transaction_id is not null))
      );
      create index wallet_charge_attempts_key_idx on wallet_charge_attempts (idempotency_key);
      create index wallet_charge_attempts_user_idx on wallet_charge_attempts (wallet_user_id, created_at desc);
    `);
  }
}

import { Migration } from "@mikro-orm/migrations";

/**
 * Refunds of subscription charges (services/subscriptions/refunds) and the
 * merchant's balance history:
 * - the ledger gets a fourth movement kind, REFUND (merchant → wallet user);
 * - a charge keeps what was refunded of it, in its currency and its asset,
 *   and the database refuses a total above the charge;
 * - one row per refund attempt. A PENDING row reserves its amount while the
 *   wallet moves the money (lease in database time, like charges); FAILED rows
 *   (merchant balance too low) stay for the audit trail and free their key.
 */
export class Migration0010Refunds extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table ledger_transactions drop constraint ledger_transactions_kind_check;
      alter table ledger_transactions add constraint ledger_transactions_kind_check
        check (kind in ('WALLET_CREDIT','CHARGE','MERCHANT_CREDIT','REFUND'));
      -- A merchant's balance history reads its accounts' entries newest first.
      create index ledger_entries_account_keyset_idx on ledger_entries (account_id, created_at desc, id desc);

      alter table subscription_charges
        add column amount_refunded numeric(38,18) not null default 0,
        add column asset_amount_refunded numeric(38,18) not null default 0,
        add constraint subscription_charges_refund_bound check (
          amount_refunded >= 0 and amount_refunded <= amount
          and asset_amount_refunded >= 0 and asset_amount_refunded <= coalesce(asset_amount, 0));

      create table subscription_refunds (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        charge_id uuid not null references subscription_charges(id),
        subscription_id uuid not null references subscriptions(id),
        wallet_user_id uuid not null,
        amount numeric(38,18) not null check (amount > 0),
        currency varchar(16) not null,
        asset varchar(16) not null,
        asset_amount numeric(38,18) not null check (asset_amount > 0),
        status varchar(16) not null check (status in ('PENDING','SUCCEEDED','FAILED')),
        failure_reason varchar(64),
        reason varchar(500),
        metadata jsonb not null default '{}',
        -- The merchant's Idempotency-Key; cleared when the attempt fails so a retry can try again.
        idempotency_key varchar(200),
        wallet_transaction_id varchar(64),
        lease_until timestamptz,
        created_at timestamptz not null,
        settled_at timestamptz,
        constraint subscription_refunds_failure_reason check ((status = 'FAILED') = (failure_reason is not null)),
        constraint subscription_refunds_settled check ((status = 'SUCCEEDED') = (wallet_transaction_id is not null))
      );
      create unique index subscription_refunds_idempotency_key on subscription_refunds (merchant_id, idempotency_key)
        where idempotency_key is not null;
      create index subscription_refunds_merchant_idx on subscription_refunds (merchant_id, created_at desc, id desc);
      create index subscription_refunds_charge_idx on subscription_refunds (charge_id, created_at desc, id desc);
      create index subscription_refunds_subscription_idx on subscription_refunds (subscription_id, created_at desc, id desc);
      create index subscription_refunds_pending_idx on subscription_refunds (created_at) where status = 'PENDING';
    `);
  }
}

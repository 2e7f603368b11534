import { Migration } from "@mikro-orm/migrations";

/**
 * Payment orders, the transfers seen for them, the merchant credits they
 * owe, and the per-key counters that hand out deposit-address indexes.
 */
export class Migration0005PaymentOrders extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      -- One row per configured extended public key. Incremented in its own
      -- statement (like a sequence): the row lock lasts one statement, an index
      -- is never handed out twice, and a failed create merely skips one.
      create table address_derivation_counters (
        key_id varchar(100) primary key,
        next_index bigint not null check (next_index between 0 and 2147483648)
      );

      create table payment_orders (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        external_id varchar(200) not null,
        external_customer_id varchar(200) not null,
        asset varchar(32) not null,
        network varchar(32) not null,
        decimals smallint not null check (decimals between 0 and 18),
        required_confirmations integer not null check (required_confirmations >= 0),
        address varchar(128) not null,
        derivation_key varchar(100) not null,
        derivation_index integer not null check (derivation_index >= 0),
        amount_to_pay numeric(38,18) not null check (amount_to_pay > 0),
        requested_amount numeric(38,18) not null,
        requested_currency varchar(16),
        -- As quoted by the wallet (asset units per currency unit): a recorded fact, kept verbatim.
        rate varchar(100),
        rate_at timestamptz,
        status varchar(16) not null check (status in ('PENDING','UNDERPAID','CONFIRMING','PAID','EXPIRED')),
        expires_at timestamptz not null,
        amount_paid numeric(38,18) not null default 0,
        overpaid_amount numeric(38,18) not null default 0,
        amount_paid_late numeric(38,18) not null default 0,
        late_payment boolean not null default false,
        underpayment_tolerance_percent numeric(5,2) not null default 0 check (underpayment_tolerance_percent between 0 and 10),
        -- SHA-256 of the canonical create request: a retried externalId must match it.
        request_fingerprint varchar(64) not null,
        metadata jsonb not null default '{}',
        paid_at timestamptz,
        expired_at timestamptz,
        settled_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        constraint payment_orders_external_id_key unique (merchant_id, external_id),
        constraint payment_orders_address_key unique (address),
        constraint payment_orders_derivation_key unique (derivation_key, derivation_index)
      );
      -- Keyset pagination (newest first) with the list filters.
      create index payment_orders_merchant_created_idx on payment_orders (merchant_id, created_at desc, id desc);
      create index payment_orders_merchant_status_idx on payment_orders (merchant_id, status, created_at desc, id desc);
      create index payment_orders_merchant_customer_idx on payment_orders (merchant_id, external_customer_id, created_at desc, id desc);
      -- The expiry sweep reads only open orders.
      create index payment_orders_open_expiry_idx on payment_orders (expires_at) where status in ('PENDING','UNDERPAID');

      -- What the merchant's ledger account is owed from an order; DONE once
      -- wallet.CreditMerchant (idempotent on idempotency_key) has answered.
      create table payment_order_credits (
        id uuid primary key,
        order_id uuid not null references payment_orders(id),
        merchant_id uuid not null references merchants(id),
        idempotency_key varchar(200) not null unique,
        asset varchar(32) not null,
        amount numeric(38,18) not null check (amount > 0),
        status varchar(16) not null check (status in ('PENDING','DONE')),
        attempts integer not null default 0,
        last_error varchar(500),
        wallet_transaction_id varchar(100),
        created_at timestamptz not null,
        credited_at timestamptz
      );
      create index payment_order_credits_order_idx on payment_order_credits (order_id);
      create index payment_order_credits_pending_idx on payment_order_credits (created_at) where status = 'PENDING';

      -- Transfers seen on chain. A transaction counts once per address (a
      -- batch transaction paying several orders counts for each of them).
      create table payment_order_payments (
        id uuid primary key,
        order_id uuid not null references payment_orders(id),
        merchant_id uuid not null references merchants(id),
        asset varchar(32) not null,
        network varchar(32) not null,
        address varchar(128) not null,
        tx_id varchar(200) not null,
        amount numeric(38,18) not null check (amount > 0),
        confirmations integer not null check (confirmations >= 0),
        late boolean not null,
        -- Deferred: a payment and the credit that covers it are written in one flush, in no set order.
        credit_id uuid references payment_order_credits(id) deferrable initially deferred,
        seen_at timestamptz not null,
        updated_at timestamptz not null,
        constraint payment_order_payments_tx_key unique (network, tx_id, address)
      );
      create index payment_order_payments_order_idx on payment_order_payments (order_id, seen_at);
    `);
  }
}

import { Migration } from "@mikro-orm/migrations";

/**
 * Money out (issue 23): payout destinations (addresses a merchant pays out
 * to, usable after a cooling period), payouts, and the wallet calls a payout
 * makes (payout_calls: the debit of its amount + fee, the hand-over to the
 * chain, the reversal when it fails or is cancelled), each a row of the
 * wallet-call protocol (lease, fencing, back-off, parking). The sandbox chain
 * (payout_sandbox_chain) is the fake chain's own record of transfers, one per
 * payout id. The ledger gains PAYOUT (merchant → PAYOUTS system account) and
 * PAYOUT_REVERSAL (back); merchants gain a payout review threshold in USD;
 * reconciliation gains PAYOUT_PAID_TWICE.
 */
export class Migration0024Payouts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table payout_destinations (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        asset varchar(16) not null,
        network varchar(16) not null,
        address varchar(128) not null,
        label varchar(200),
        activates_at timestamptz not null,
        removed_at timestamptz,
        created_at timestamptz not null
      );
      -- The same asset + address twice (not removed) is DESTINATION_EXISTS.
      create unique index payout_destinations_live_key on payout_destinations (merchant_id, asset, address) where removed_at is null;
      create index payout_destinations_list_idx on payout_destinations (merchant_id, created_at desc, id desc);

      create table payouts (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        -- What asked for it: MERCHANT (POST /api/v1/payouts); ORDER_REFUND later (an order refund paid out to the customer).
        source varchar(16) not null default 'MERCHANT' check (source in ('MERCHANT','ORDER_REFUND')),
        source_id uuid,
        destination_id uuid references payout_destinations(id),
        asset varchar(16) not null,
        network varchar(16) not null,
        address varchar(128) not null,
        amount numeric(38,18) not null check (amount > 0),
        fee numeric(38,18) not null check (fee >= 0),
        status varchar(16) not null check (status in ('OPENING','REFUSED','PENDING','IN_REVIEW','PROCESSING','PAID','FAILED','CANCELLED')),
        tx_hash varchar(100),
        failure_reason varchar(500),
        metadata jsonb not null default '{}',
        idempotency_key varchar(200),
        debited_at timestamptz,
        reversed_at timestamptz,
        submitted_at timestamptz,
        paid_at timestamptz,
        failed_at timestamptz,
        cancelled_at timestamptz,
        -- Decided at create (the amount converted to USD above the merchant's payoutReviewAbove): waits IN_REVIEW once debited.
        review_required boolean not null default false,
        next_chain_check_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        check ((status = 'PROCESSING' or status = 'PAID') <= (tx_hash is not null)),
        check ((status = 'PAID') = (paid_at is not null))
      );
      create unique index payouts_idempotency_key on payouts (merchant_id, idempotency_key) where idempotency_key is not null;
      create index payouts_list_idx on payouts (merchant_id, created_at desc, id desc);
      create index payouts_status_idx on payouts (status, created_at desc, id desc);
      create index payouts_processing_idx on payouts (next_chain_check_at nulls first) where status = 'PROCESSING';

      create table payout_calls (
        id uuid primary key,
        payout_id uuid not null references payouts(id),
        kind varchar(16) not null check (kind in ('DEBIT','SUBMIT','REVERSAL')),
        status varchar(16) not null check (status in ('PENDING','DONE','REFUSED','VOID')),
        wallet_transaction_id varchar(64),
        tx_hash varchar(100),
        amount numeric(38,18) not null,
        asset varchar(16) not null,
        lease_until timestamptz,
        lease_generation integer not null default 0,
        settle_failures integer not null default 0,
        next_settle_at timestamptz,
        parked_at timestamptz,
        last_error varchar(500),
        created_at timestamptz not null,
        settled_at timestamptz,
        constraint payout_calls_once unique (payout_id, kind)
      );
      create index payout_calls_stale_idx on payout_calls (next_settle_at nulls first, created_at) where status = 'PENDING' and parked_at is null;

      -- The sandbox chain: one transfer per payout id, whatever the retries (submissions counts them).
      create table payout_sandbox_chain (
        payout_id uuid primary key,
        network varchar(16) not null,
        address varchar(128) not null,
        amount numeric(38,18) not null,
        tx_hash varchar(100) not null unique,
        submissions integer not null default 1,
        confirmations_needed integer not null,
        block_seconds integer not null,
        submitted_at timestamptz not null,
        failed_reason varchar(500)
      );

      alter table merchants add column payout_review_above numeric(38,18) check (payout_review_above >= 0);

      alter table ledger_transactions drop constraint ledger_transactions_kind_check;
      alter table ledger_transactions add constraint ledger_transactions_kind_check
        check (kind in ('WALLET_CREDIT','CHARGE','MERCHANT_CREDIT','REFUND','PAYOUT','PAYOUT_REVERSAL'));

      alter table reconciliation_anomalies drop constraint if exists reconciliation_anomalies_kind_check;
      alter table reconciliation_anomalies add constraint reconciliation_anomalies_kind_check check (kind in (
        'MONEY_WITHOUT_SUCCEEDED_OWNER','SUCCEEDED_OWNER_WITHOUT_MONEY','AMOUNT_MISMATCH','PARKED_ROW',
        'STALE_PENDING_ROW','CHARGE_WITHOUT_BILLED_PERIOD','PAYOUT_PAID_TWICE'));
    `);
  }
}

import { Migration } from "@mikro-orm/migrations";

/**
 * Refunds of payment orders (issue 23): an order refund is a payout with
 * source ORDER_REFUND whose amount + fee is reserved from the merchant's
 * balance at create (ledger kind ORDER_REFUND, merchant → PAYOUTS). Without
 * the customer's address it waits AWAITING_ADDRESS for a claim (a hosted page
 * with an unguessable token) until claim_expires_at, then EXPIRED with the
 * money back. The payout's address is unknown until then.
 */
export class Migration0027OrderRefunds extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table payouts alter column address drop not null;
      alter table payouts drop constraint payouts_status_check;
      alter table payouts add constraint payouts_status_check
        check (status in ('OPENING','REFUSED','AWAITING_ADDRESS','PENDING','IN_REVIEW','PROCESSING','PAID','FAILED','CANCELLED','EXPIRED'));
      alter table payouts add constraint payouts_address_known
        check (address is not null or status in ('OPENING','REFUSED','AWAITING_ADDRESS','EXPIRED'));
      create unique index payouts_source_key on payouts (source, source_id) where source_id is not null;

      create table order_refunds (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        payment_order_id uuid not null references payment_orders(id),
        payout_id uuid not null unique references payouts(id),
        asset varchar(16) not null,
        amount numeric(38,18) not null check (amount > 0),
        status varchar(16) not null check (status in ('OPENING','REFUSED','AWAITING_ADDRESS','PROCESSING','PAID','FAILED','EXPIRED')),
        address varchar(128),
        -- SHA-256 of the claim token (the token itself is derived from the id under SECRETS_KEY, never stored).
        claim_token_hash varchar(64) unique,
        claim_expires_at timestamptz,
        idempotency_key varchar(200),
        created_at timestamptz not null,
        updated_at timestamptz not null,
        check ((status = 'AWAITING_ADDRESS') <= (claim_expires_at is not null))
      );
      create unique index order_refunds_idempotency_key on order_refunds (merchant_id, idempotency_key) where idempotency_key is not null;
      create index order_refunds_order_idx on order_refunds (payment_order_id, created_at desc, id desc);
      create index order_refunds_claims_due_idx on order_refunds (claim_expires_at) where status = 'AWAITING_ADDRESS';

      alter table ledger_transactions drop constraint ledger_transactions_kind_check;
      alter table ledger_transactions add constraint ledger_transactions_kind_check
        check (kind in ('WALLET_CREDIT','CHARGE','MERCHANT_CREDIT','REFUND','PAYOUT','PAYOUT_REVERSAL','ORDER_REFUND'));
    `);
  }
}

import { Migration } from "@mikro-orm/migrations";

/**
 * Pricing and paperwork (issue 25):
 * - coupons and promotion codes, per merchant; a redemption is one
 *   conditional update of times_redeemed, and the checks below make the
 *   database refuse a count above maxRedemptions whoever writes it;
 * - a subscription's discount (the coupon's terms copied when it is applied,
 *   so the batch renewal prices from the locked row alone) and its credit
 *   balance (a prorated downgrade), in the plan's currency;
 * - a charge's price parts (subtotal, discount, credit used: amount =
 *   subtotal − discount − credit), the rate's time, and its receipt (number
 *   per merchant from a counter row locked in the settle, unguessable token);
 * - change sessions gain proration.
 */
export class Migration0026PricingAndReceipts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table coupons (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        name varchar(200) not null,
        percent_off numeric check (percent_off > 0 and percent_off <= 100),
        amount_off numeric(38,18) check (amount_off > 0),
        currency varchar(16),
        duration varchar(16) not null check (duration in ('ONCE','REPEATING','FOREVER')),
        duration_in_periods int check (duration_in_periods between 1 and 120),
        max_redemptions int check (max_redemptions >= 1),
        times_redeemed int not null default 0,
        redeem_by timestamptz,
        applies_to_plan_ids jsonb,
        metadata jsonb not null default '{}',
        valid boolean not null default true,
        deleted_at timestamptz,
        created_at timestamptz not null,
        constraint coupons_one_kind check ((percent_off is null) <> (amount_off is null)),
        constraint coupons_amount_currency check ((amount_off is null) = (currency is null)),
        constraint coupons_periods check ((duration = 'REPEATING') = (duration_in_periods is not null)),
        constraint coupons_redemptions check (times_redeemed >= 0 and (max_redemptions is null or times_redeemed <= max_redemptions))
      );
      create index coupons_merchant_idx on coupons (merchant_id, created_at desc, id desc);

      create table promotion_codes (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        coupon_id uuid not null references coupons(id),
        code varchar(50) not null,
        max_redemptions int check (max_redemptions >= 1),
        times_redeemed int not null default 0,
        expires_at timestamptz,
        active boolean not null default true,
        created_at timestamptz not null,
        constraint promotion_codes_redemptions check (times_redeemed >= 0 and (max_redemptions is null or times_redeemed <= max_redemptions))
      );
      -- Codes are matched case-insensitively and stored as sent.
      create unique index promotion_codes_merchant_code_key on promotion_codes (merchant_id, upper(code));
      create index promotion_codes_merchant_idx on promotion_codes (merchant_id, created_at desc, id desc);

      alter table subscriptions
        add column discount_coupon_id uuid references coupons(id),
        add column discount_promotion_code_id uuid references promotion_codes(id),
        add column discount_promotion_code varchar(50),
        add column discount_percent_off numeric,
        add column discount_amount_off numeric(38,18),
        add column discount_currency varchar(16),
        add column discount_start timestamptz,
        add column discount_periods_remaining int check (discount_periods_remaining >= 1),
        add column credit_balance numeric(38,18) not null default 0 check (credit_balance >= 0),
        add column credit_currency varchar(16);

      alter table subscription_charges
        add column subtotal numeric(38,18),
        add column discount_amount numeric(38,18) not null default 0 check (discount_amount >= 0),
        add column credit_applied numeric(38,18) not null default 0 check (credit_applied >= 0),
        add column coupon_id uuid,
        add column rate_at timestamptz,
        add column receipt_number varchar(40),
        add column receipt_token varchar(64),
        add column receipt_url varchar(2200);
      create unique index subscription_charges_receipt_number_key on subscription_charges (merchant_id, receipt_number) where receipt_number is not null;
      create unique index subscription_charges_receipt_token_key on subscription_charges (receipt_token) where receipt_token is not null;

      -- One row per merchant: the settle takes the next number under this row's lock, so numbers follow commit order with no gap.
      create table receipt_counters (
        merchant_id uuid primary key references merchants(id),
        prefix varchar(20) not null,
        last_number bigint not null default 0 check (last_number >= 0)
      );

      alter table subscription_change_sessions
        add column proration varchar(16) not null default 'NONE' check (proration in ('NONE','PRORATE')),
        -- PRORATE: what the change came to when it applied (positive: charged; negative: credited).
        add column proration_amount numeric(38,18);
    `);
  }
}

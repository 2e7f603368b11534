import { Migration } from "@mikro-orm/migrations";

/**
 * Issue 26. Per-merchant billing settings: each column null = the
 * deployment's default (DUNNING_RETRY_DAYS, DUNNING_FINAL_STATUS,
 * CHARGE_NOTICE_DAYS; retryOnTopUp and each customer email default to true),
 * so a merchant who set nothing follows the environment. A subscription's
 * funding fallback (ordered, up to two assets); a charge paid from one of
 * them says so; the at-risk warning is recorded once per period
 * (at_risk_period_index) and its shortfall cleared when the balance covers
 * the charge again.
 */
export class Migration0025DunningSettingsAndFallback extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table merchant_billing_settings (
        merchant_id uuid primary key,
        dunning_retry_days integer[] null check (dunning_retry_days is null or cardinality(dunning_retry_days) between 1 and 10),
        dunning_final_status varchar(16) null check (dunning_final_status in ('UNPAID','CANCELLED')),
        charge_notice_days integer null check (charge_notice_days between 0 and 365),
        retry_on_top_up boolean null,
        customer_emails jsonb null,
        version integer not null default 1,
        updated_at timestamptz not null
      );
      alter table subscriptions
        add column fallback_assets text[] not null default '{}' check (cardinality(fallback_assets) <= 2),
        add column at_risk_period_index integer null,
        add column at_risk_shortfall numeric(38,18) null;
      alter table subscription_charges add column funded_by_fallback boolean not null default false;
    `);
  }
}

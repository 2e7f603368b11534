import { Migration } from "@mikro-orm/migrations";

/**
 * Plans can be archived (and unarchived), and their price and cadence can
 * never change once created: a trigger refuses any update of those columns,
 * so whatever a process has cached of a plan's price data is true forever
 * (only name, description, externalReference, metadata and status move).
 * Customers list their subscriptions across merchants: an index by wallet user.
 */
export class Migration0011PlanLifecycleAndSelfService extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table plans add column archived_at timestamptz;
      alter table plans add constraint plans_status_check check (status in ('ACTIVE','ARCHIVED'));
      alter table plans add constraint plans_archived_at_check check ((status = 'ARCHIVED') = (archived_at is not null));
      create index plans_merchant_status_created_idx on plans (merchant_id, status, created_at desc, id desc);

      create function plans_price_is_immutable() returns trigger language plpgsql as $$
      begin
        if new.amount is distinct from old.amount
          or new.currency is distinct from old.currency
          or new.interval is distinct from old.interval
          or new.interval_count is distinct from old.interval_count
          or new.trial_days is distinct from old.trial_days
          or new.maximum_charge_amount is distinct from old.maximum_charge_amount
          or new.merchant_id is distinct from old.merchant_id then
          raise exception 'plan % price and cadence are immutable', old.id using errcode = 'check_violation';
        end if;
        return new;
      end $$;
      create trigger plans_price_is_immutable before update on plans
        for each row execute function plans_price_is_immutable();

      create index subscriptions_wallet_user_created_idx on subscriptions (wallet_user_id, created_at desc, id desc);
    `);
  }
}

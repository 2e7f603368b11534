import { Migration } from "@mikro-orm/migrations";

/**
 * Read paths of the dashboard's Overview and Subscriptions pages (issue 24):
 * - search by customer email (case-insensitive, exact): the merchant's
 *   subscriptions of that email, newest first, from one index range;
 * - search by externalReference across every status (the unique index holds
 *   live subscriptions only);
 * - the Overview's counts: subscriptions per status and plan, and charges of
 *   the last 30 days per status with their amount (index-only scans: a
 *   merchant with years of charges reads 30 days of index entries: the index
 *   subscription_charges_merchant_created_idx, made by 0031 for the export
 *   too, includes status, amount and currency for it);
 * - a subscription's events: the event data's `id` (subscription.* events)
 *   or `subscriptionId` (charges, refunds, change sessions).
 */
export class Migration0033DashboardLookups extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create index subscriptions_merchant_email_idx on subscriptions (merchant_id, lower(customer_email), created_at desc, id desc)
        where customer_email is not null;
      create index subscriptions_merchant_external_idx on subscriptions (merchant_id, external_reference, created_at desc, id desc);
      create index subscriptions_merchant_status_plan_idx on subscriptions (merchant_id, status, plan_id);
      create index events_merchant_object_idx on events (merchant_id, (data->>'id'), created_at desc, id desc);
      create index events_merchant_subscription_idx on events (merchant_id, (data->>'subscriptionId'), created_at desc, id desc);
    `);
  }
}

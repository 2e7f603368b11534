import { Migration } from "@mikro-orm/migrations";

/**
 * The at-risk recheck after a renewal batch's debits
 * (enqueueRechecksAfterDebits, subscriptions/renewals/charge-at-risk.ts)
 * asks, for the batch's wallet users, which of their subscriptions has an
 * announced charge still to come. Through the wallet-user or billing-date
 * indexes it read every renewed subscription of those users (a renewal moves
 * next_billing_at past now) only to drop them all: per batch, rows in
 * proportion to everything renewed so far, so a sweep of 100,000 slowed down
 * as it went. This partial index holds only subscriptions between their
 * notice and their charge (the query's own predicate), usually a handful.
 */
export class Migration0035AnnouncedChargesIndex extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create index subscriptions_announced_charge_idx on subscriptions (wallet_user_id)
        where status in ('ACTIVE', 'TRIALING') and notified_period_index = next_period_index;
    `);
  }
}

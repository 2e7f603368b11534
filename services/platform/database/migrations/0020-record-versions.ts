import { Migration } from "@mikro-orm/migrations";

/**
 * Record versions (issue 16): a webhook endpoint may have several requests in
 * flight, so events can arrive out of order. Every subscription, change
 * session and payment order carries a `version` that each change raises by
 * one, in the transaction that records its event; a receiver keeps the
 * highest version it has seen and drops anything not newer. Existing rows
 * start at 1. A plain column, not an optimistic lock: changes are made under
 * row locks, and some are set-based SQL (`version = version + 1`).
 */
export class Migration0020RecordVersions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table subscriptions add column version integer not null default 1;
      alter table subscription_change_sessions add column version integer not null default 1;
      alter table payment_orders add column version integer not null default 1;
    `);
  }
}

import { Migration } from "@mikro-orm/migrations";

/**
 * The Idempotency-Key a subscription was created under (null: none). A create
 * repeated under the same key, with the same body, while the subscription
 * awaits the customer answers it again with its authorization URL (a retry
 * whose first answer was lost, e.g. a 504); without a key, or under another,
 * the live externalReference is a conflict (409 SUBSCRIPTION_ALREADY_EXISTS).
 * Read only by merchant and externalReference (the live-reference index finds
 * the row), so it needs no index. Nullable without a default: adding it
 * rewrites no row.
 */
export class Migration0036CreateIdempotencyKey extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table subscriptions add column create_idempotency_key varchar(200) null;`);
  }
}

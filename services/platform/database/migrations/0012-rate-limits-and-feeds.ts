import { Migration } from "@mikro-orm/migrations";

/**
 * Issue 11.
 * - A merchant's own rate limit (null = the RATE_LIMIT_* defaults), 1–100000.
 * - The event feed is numbered per merchant: `published_seq` restarts at 1 for
 *   each merchant (a global counter revealed the platform's volume). Existing
 *   numbers are renumbered in their old order, so each feed stays gap-free.
 */
export class Migration0012RateLimitsAndFeeds extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table merchants
        add column rate_limit_per_second integer check (rate_limit_per_second between 1 and 100000),
        add column rate_limit_burst integer check (rate_limit_burst between 1 and 100000);

      drop index if exists events_published_seq_key;
      drop index if exists events_merchant_published_idx;
      update events e set published_seq = o.n
        from (select id, row_number() over (partition by merchant_id order by published_seq) as n
                from events where published_seq is not null) o
       where e.id = o.id;
      create unique index events_merchant_published_seq_key on events (merchant_id, published_seq) where published_seq is not null;
    `);
  }
}

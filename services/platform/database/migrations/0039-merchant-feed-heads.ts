import { Migration } from "@mikro-orm/migrations";

/**
 * merchant_feed_heads: each merchant's last feed position (event_feed's
 * published_seq), kept apart from the feed. The relay numbered a merchant's
 * new events after the greatest position left in event_feed; once retention
 * had dropped every month of an idle merchant's feed, its next event was
 * numbered 1 again, and a poller holding `sequenceAfter=N` would not see the
 * new events until they passed N. The head outlives retention: a feed never
 * restarts.
 *
 * One row per merchant that has ever had an event relayed, raised by the
 * relay (one at a time) in the transaction that writes the positions.
 * Backfilled from the feed as it stands, under a lock that holds the relay of
 * the release before (it does not know this table) off the feed meanwhile;
 * should that relay place events after the migration, the new one numbers
 * after whichever is further, the head or the feed. A merchant whose whole
 * feed retention had already dropped has no position left to carry over: its
 * next event is numbered 1 once more (CHANGELOG).
 */
export class Migration0039MerchantFeedHeads extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table merchant_feed_heads (
        merchant_id uuid primary key references merchants (id),
        last_seq bigint not null check (last_seq > 0)
      );
      lock table event_feed in share mode;
      insert into merchant_feed_heads (merchant_id, last_seq)
        select merchant_id, max(published_seq) from event_feed group by merchant_id;
    `);
  }
}

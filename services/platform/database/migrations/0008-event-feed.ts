import { Migration } from "@mikro-orm/migrations";

/**
 * The event feed's sequence. `seq` is taken at insert, so a transaction that
 * commits late can land behind a number a poller has already passed.
 * `published_seq` is given by the relay, which runs one at a time and only sees
 * committed events: it grows in commit order, so polling `sequenceAfter` never
 * skips an event.
 */
export class Migration0008EventFeed extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table events add column published_seq bigint;
      update events e set published_seq = o.n
        from (select id, row_number() over (order by seq) as n from events where relayed_at is not null) o
       where e.id = o.id;
      create unique index events_published_seq_key on events (published_seq);
      create index events_merchant_published_idx on events (merchant_id, published_seq) where published_seq is not null;
    `);
  }
}

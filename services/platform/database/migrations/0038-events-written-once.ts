import { Migration } from "@mikro-orm/migrations";

/**
 * An event row is written once (issue 27, B8/B6: each event was written three
 * times). The relay's and the email collector's state leaves the events row:
 *
 * - event_outbox: one narrow row per event and consumer still to handle it
 *   ('relay': every event; 'emails': the email-worthy types), in the events'
 *   seq order (primary key (consumer, seq)). A consumer deletes its rows in
 *   the transaction that handles them. Before, the relay's mark
 *   (relayed_at, published_seq) and the collector's (emails_collected_at)
 *   were updates of the wide events row that changed indexed columns: no HOT
 *   update, a new version in every one of its indexes, and the dead ones left
 *   to vacuum in the largest table. Not partitioned: its rows live seconds;
 *   autovacuum is told to visit it often, as a queue table wants.
 * - event_feed: each relayed event's place in its merchant's feed
 *   (published_seq, 1, 2, 3… per merchant in relay order), partitioned by
 *   month on the event's created_at like the events, and kept as long.
 * - A statement trigger on events fills event_outbox from every insert,
 *   whatever writes it (the ORM's flush, a set's one statement, a test's
 *   insert): an event cannot be recorded without reaching its consumers.
 *   It fires for inserts into `events` itself, not into a partition by name,
 *   so the partition sweep moving rows out of the default partition does
 *   not queue them again. The email types are those of
 *   services/emails/contract.ts EMAIL_EVENT_TYPES (a test checks they agree).
 *
 * The backfill carries the state over: unrelayed events and uncollected email
 * events into the outbox, the published positions into the feed (months from
 * the oldest event to three ahead, as 0032 made the events').
 */
export class Migration0038EventsWrittenOnce extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      lock table events in exclusive mode;

      create table event_outbox (
        consumer varchar(16) not null check (consumer in ('relay', 'emails')),
        seq bigint not null,
        event_id uuid not null,
        created_at timestamptz not null,
        merchant_id uuid not null,
        type varchar(100) not null,
        primary key (consumer, seq)
      ) with (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000);

      create table event_feed (
        merchant_id uuid not null,
        published_seq bigint not null,
        event_id uuid not null,
        event_created_at timestamptz not null,
        relayed_at timestamptz not null,
        primary key (event_id, event_created_at)
      ) partition by range (event_created_at);
      create unique index event_feed_merchant_seq_key on event_feed (merchant_id, published_seq, event_created_at);

      do $$
      declare
        m timestamptz;
        last_month timestamptz := date_trunc('month', now(), 'UTC') + interval '3 months';
      begin
        select date_trunc('month', least(coalesce(min(created_at), now()), now()), 'UTC') into m from events;
        while m <= last_month loop
          execute format('create table %I partition of event_feed for values from (%L) to (%L)',
            'event_feed_' || to_char(m at time zone 'UTC', 'YYYY_MM'), m, (m at time zone 'UTC' + interval '1 month') at time zone 'UTC');
          m := (m at time zone 'UTC' + interval '1 month') at time zone 'UTC';
        end loop;
      end $$;
      create table event_feed_default partition of event_feed default;

      insert into event_feed (merchant_id, published_seq, event_id, event_created_at, relayed_at)
        select merchant_id, published_seq, id, created_at, coalesce(relayed_at, created_at) from events where published_seq is not null;
      insert into event_outbox (consumer, seq, event_id, created_at, merchant_id, type)
        select 'relay', seq, id, created_at, merchant_id, type from events where relayed_at is null;
      insert into event_outbox (consumer, seq, event_id, created_at, merchant_id, type)
        select 'emails', seq, id, created_at, merchant_id, type from events
         where emails_collected_at is null
           and type in ('subscription.charge_upcoming', 'subscription.charge_at_risk', 'subscription.charge_failed', 'subscription.charge_succeeded');

      drop index events_unrelayed_idx;
      drop index events_emails_uncollected_idx;
      drop index events_merchant_published_seq_key;
      alter table events drop column relayed_at, drop column published_seq, drop column emails_collected_at;

      create function events_to_outbox() returns trigger language plpgsql as $fn$
      begin
        insert into event_outbox (consumer, seq, event_id, created_at, merchant_id, type)
        select 'relay', seq, id, created_at, merchant_id, type from recorded
        union all
        select 'emails', seq, id, created_at, merchant_id, type from recorded
         where type in ('subscription.charge_upcoming', 'subscription.charge_at_risk', 'subscription.charge_failed', 'subscription.charge_succeeded');
        return null;
      end
      $fn$;
      create trigger events_to_outbox after insert on events referencing new table as recorded
        for each statement execute function events_to_outbox();

      analyze event_outbox;
      analyze event_feed;
    `);
  }
}

import { Migration } from "@mikro-orm/migrations";

/**
 * Events, webhook deliveries and their attempts become tables partitioned by
 * month (issue 27, "tables that stay small"): the retention sweep
 * (services/retention) drops a whole month at once, which costs no vacuum.
 *
 * - events: by created_at. Deliveries and attempts: by `event_created_at`, the
 *   time of the event they carry (a new column), so an event and everything
 *   sent about it share a month, and their unique keys stay what they were
 *   ((event_id, endpoint_id), (delivery_id, attempt_number)): the partition
 *   key a unique index must include is a function of the other columns.
 * - A primary key must hold the partition key: (id, created_at) and
 *   (id, event_created_at); a lookup by id alone still uses it (its leading
 *   column), one probe per month. events.seq and each merchant's published_seq were
 *   unique on their own; now per month (the relay's advisory lock gives them
 *   out one at a time, which is what made them unique in the first place).
 * - Foreign keys INTO these tables are dropped (deliveries, attempts and
 *   customer_emails → events; attempts → deliveries): a key pointing into a
 *   partitioned table forbids dropping a month while anything points at it,
 *   and customer_emails (kept for good) would pin every month for ever. The
 *   writers keep them true (the relay inserts deliveries from the events it
 *   reads in the same transaction) and the sweep drops in order: deliveries
 *   and attempts no later than their events (RETENTION_* are validated so).
 *   Foreign keys OUT of them (merchants, webhook endpoints) stay.
 * - Each table gets a DEFAULT partition, so an insert outside the months
 *   created (the sweep down for months, a sandbox clock moved ahead) never
 *   fails a business transaction; the sweep moves such rows into their month
 *   when it creates it.
 * - Months from the oldest row to three ahead are created here; the rows are
 *   copied across (the tables are locked meanwhile: a deploy step), the old
 *   tables dropped and the indexes recreated under their old names.
 * Partition names: <table>_YYYY_MM and <table>_default (monthly-partitions.ts).
 */
export class Migration0032MonthlyPartitions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      lock table events, webhook_deliveries, webhook_delivery_attempts, customer_emails in exclusive mode;

      alter table customer_emails drop constraint if exists customer_emails_event_id_fkey;
      alter table webhook_delivery_attempts drop constraint if exists webhook_delivery_attempts_event_id_fkey;
      alter table webhook_delivery_attempts drop constraint if exists webhook_delivery_attempts_delivery_id_fkey;
      alter table webhook_deliveries drop constraint if exists webhook_deliveries_event_id_fkey;

      -- The feed's sequence outlives the table it numbered.
      alter sequence events_seq_seq owned by none;

      create table events_partitioned (
        id uuid not null,
        seq bigint not null default nextval('events_seq_seq'),
        merchant_id uuid not null constraint events_merchant_id_fkey references merchants(id),
        type varchar(100) not null,
        data jsonb not null,
        created_at timestamptz not null,
        relayed_at timestamptz,
        published_seq bigint,
        emails_collected_at timestamptz
      ) partition by range (created_at);

      create table webhook_deliveries_partitioned (
        id uuid not null,
        merchant_id uuid not null constraint webhook_deliveries_merchant_id_fkey references merchants(id),
        event_id uuid not null,
        endpoint_id uuid not null constraint webhook_deliveries_endpoint_id_fkey references webhook_endpoints(id),
        event_seq bigint not null,
        status varchar(16) not null constraint webhook_deliveries_status_check check (status in ('PENDING','SUCCEEDED','FAILED')),
        attempt_count integer not null default 0,
        retry_index integer not null default 0,
        next_attempt_at timestamptz,
        last_attempt_at timestamptz,
        last_status_code integer,
        last_error varchar(1000),
        created_at timestamptz not null,
        updated_at timestamptz not null,
        event_created_at timestamptz not null
      ) partition by range (event_created_at);

      create table webhook_delivery_attempts_partitioned (
        id uuid not null,
        delivery_id uuid not null,
        endpoint_id uuid not null constraint webhook_delivery_attempts_endpoint_id_fkey references webhook_endpoints(id),
        event_id uuid not null,
        attempt_number integer not null,
        attempted_at timestamptz not null,
        outcome varchar(16) not null constraint webhook_delivery_attempts_outcome_check check (outcome in ('IN_PROGRESS','SUCCEEDED','FAILED','INTERRUPTED')),
        status_code integer,
        error varchar(1000),
        duration_ms integer,
        response_excerpt varchar(1000),
        event_created_at timestamptz not null
      ) partition by range (event_created_at);

      -- Months from the oldest event (or now) to three ahead, plus a default partition each.
      do $$
      declare
        first_month timestamptz;
        last_month timestamptz;
        m timestamptz;
        t text;
      begin
        select date_trunc('month', least(coalesce(min(created_at), now()), now()), 'UTC') into first_month from events;
        last_month := date_trunc('month', now(), 'UTC') + interval '3 months';
        foreach t in array array['events', 'webhook_deliveries', 'webhook_delivery_attempts'] loop
          m := first_month;
          while m <= last_month loop
            execute format('create table %I partition of %I for values from (%L) to (%L)%s',
              t || '_' || to_char(m at time zone 'UTC', 'YYYY_MM'), t || '_partitioned',
              m, (m at time zone 'UTC' + interval '1 month') at time zone 'UTC',
              case when t = 'webhook_deliveries' then ' with (fillfactor = 80)' else '' end);
            m := (m at time zone 'UTC' + interval '1 month') at time zone 'UTC';
          end loop;
          execute format('create table %I partition of %I default%s', t || '_default', t || '_partitioned',
            case when t = 'webhook_deliveries' then ' with (fillfactor = 80)' else '' end);
        end loop;
      end $$;

      insert into events_partitioned (id, seq, merchant_id, type, data, created_at, relayed_at, published_seq, emails_collected_at)
        select id, seq, merchant_id, type, data, created_at, relayed_at, published_seq, emails_collected_at from events;
      -- A delivery or attempt whose event is gone (none should be) keeps its own time.
      insert into webhook_deliveries_partitioned (id, merchant_id, event_id, endpoint_id, event_seq, status, attempt_count, retry_index,
          next_attempt_at, last_attempt_at, last_status_code, last_error, created_at, updated_at, event_created_at)
        select d.id, d.merchant_id, d.event_id, d.endpoint_id, d.event_seq, d.status, d.attempt_count, d.retry_index,
               d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.last_error, d.created_at, d.updated_at, coalesce(e.created_at, d.created_at)
          from webhook_deliveries d left join events e on e.id = d.event_id;
      insert into webhook_delivery_attempts_partitioned (id, delivery_id, endpoint_id, event_id, attempt_number, attempted_at, outcome,
          status_code, error, duration_ms, response_excerpt, event_created_at)
        select a.id, a.delivery_id, a.endpoint_id, a.event_id, a.attempt_number, a.attempted_at, a.outcome,
               a.status_code, a.error, a.duration_ms, a.response_excerpt, coalesce(e.created_at, a.attempted_at)
          from webhook_delivery_attempts a left join events e on e.id = a.event_id;

      drop table webhook_delivery_attempts;
      drop table webhook_deliveries;
      drop table events;
      alter table events_partitioned rename to events;
      alter table webhook_deliveries_partitioned rename to webhook_deliveries;
      alter table webhook_delivery_attempts_partitioned rename to webhook_delivery_attempts;
      alter sequence events_seq_seq owned by events.seq;

      alter table events add constraint events_pkey primary key (id, created_at);
      create unique index events_seq_key on events (seq, created_at);
      create index events_merchant_created_idx on events (merchant_id, created_at desc, id desc);
      create index events_unrelayed_idx on events (seq) where relayed_at is null;
      create unique index events_merchant_published_seq_key on events (merchant_id, published_seq, created_at) where published_seq is not null;
      create index events_emails_uncollected_idx on events (seq)
        where emails_collected_at is null
          and type in ('subscription.charge_upcoming', 'subscription.charge_at_risk', 'subscription.charge_failed', 'subscription.charge_succeeded');

      alter table webhook_deliveries add constraint webhook_deliveries_pkey primary key (id, event_created_at);
      alter table webhook_deliveries add constraint webhook_deliveries_event_id_endpoint_id_key unique (event_id, endpoint_id, event_created_at);
      create index webhook_deliveries_claim_idx on webhook_deliveries (endpoint_id, event_seq, id) include (next_attempt_at) where status = 'PENDING';
      create index webhook_deliveries_endpoint_created_idx on webhook_deliveries (endpoint_id, created_at desc, id desc);
      create index webhook_deliveries_next_idx on webhook_deliveries (next_attempt_at) where status = 'PENDING';

      alter table webhook_delivery_attempts add constraint webhook_delivery_attempts_pkey primary key (id, event_created_at);
      alter table webhook_delivery_attempts add constraint webhook_delivery_attempts_delivery_id_attempt_number_key
        unique (delivery_id, attempt_number, event_created_at);

      analyze events;
      analyze webhook_deliveries;
      analyze webhook_delivery_attempts;
    `);
  }
}

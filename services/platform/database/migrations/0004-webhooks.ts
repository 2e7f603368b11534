import { Migration } from "@mikro-orm/migrations";

/**
 * Webhook endpoints, one delivery row per (event, endpoint) and one row per
 * HTTP attempt. Deliveries are the durable schedule: the queue only makes
 * them prompt, the sweep finds every due one again from here.
 */
export class Migration0004Webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table webhook_endpoints (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        url varchar(2048) not null,
        description varchar(500),
        -- JSON array of event types, or ["*"] for every type.
        enabled_events jsonb not null,
        status varchar(16) not null check (status in ('ENABLED','DISABLED','DELETED')),
        disabled_reason varchar(500),
        disabled_at timestamptz,
        -- AES-256-GCM ciphertexts (SECRETS_KEY): the secret must be readable to sign.
        secret_ciphertext text not null,
        previous_secret_ciphertext text,
        previous_secret_expires_at timestamptz,
        -- Who is sending to this endpoint right now (one request in flight per endpoint),
        -- and until when (database time) the claim holds if that worker dies.
        lease_holder uuid,
        lease_expires_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index webhook_endpoints_merchant_created_idx on webhook_endpoints (merchant_id, created_at desc, id desc);

      create table webhook_deliveries (
        id uuid primary key,
        merchant_id uuid not null references merchants(id),
        event_id uuid not null references events(id),
        endpoint_id uuid not null references webhook_endpoints(id),
        -- events.seq, copied so that an endpoint's queue is read in creation order from one index.
        event_seq bigint not null,
        status varchar(16) not null check (status in ('PENDING','SUCCEEDED','FAILED')),
        attempt_count integer not null default 0,
        -- Failed attempts since the last (re)delivery request: the index into the retry schedule.
        retry_index integer not null default 0,
        next_attempt_at timestamptz,
        last_attempt_at timestamptz,
        last_status_code integer,
        last_error varchar(1000),
        created_at timestamptz not null,
        updated_at timestamptz not null,
        unique (event_id, endpoint_id)
      );
      create index webhook_deliveries_due_idx on webhook_deliveries (endpoint_id, event_seq) where status = 'PENDING';
      create index webhook_deliveries_next_idx on webhook_deliveries (next_attempt_at) where status = 'PENDING';
      create index webhook_deliveries_endpoint_created_idx on webhook_deliveries (endpoint_id, created_at desc, id desc);

      create table webhook_delivery_attempts (
        id uuid primary key,
        delivery_id uuid not null references webhook_deliveries(id),
        endpoint_id uuid not null references webhook_endpoints(id),
        event_id uuid not null references events(id),
        attempt_number integer not null,
        attempted_at timestamptz not null,
        -- IN_PROGRESS until the answer is recorded; INTERRUPTED when the worker died meanwhile.
        outcome varchar(16) not null check (outcome in ('IN_PROGRESS','SUCCEEDED','FAILED','INTERRUPTED')),
        status_code integer,
        error varchar(1000),
        duration_ms integer,
        response_excerpt varchar(1000),
        unique (delivery_id, attempt_number)
      );
    `);
  }
}

import { Migration } from "@mikro-orm/migrations";

/**
 * Speed (issue 16).
 * - Webhook claim: an endpoint's due deliveries are read in event order from
 *   one partial index, stopping at the batch LIMIT: the claim costs the same
 *   with 10 or 100,000 pending (next_attempt_at is included so that the due
 *   filter is checked from the index).
 * - Per-endpoint delivery concurrency: max_in_flight requests at once, or
 *   ordered = true for one at a time in event order.
 * (The relay poke is a Redis PUBLISH after commit, not a NOTIFY trigger:
 * NOTIFY serializes the commits of every notifying transaction cluster-wide.)
 */
export class Migration0018SpeedIndexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create index webhook_deliveries_claim_idx on webhook_deliveries (endpoint_id, event_seq, id) include (next_attempt_at) where status = 'PENDING';
      drop index if exists webhook_deliveries_due_idx;

      alter table webhook_endpoints
        add column max_in_flight integer not null default 10 check (max_in_flight between 1 and 100),
        add column ordered boolean not null default false;
    `);
  }
}

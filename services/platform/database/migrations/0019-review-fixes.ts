import { Migration } from "@mikro-orm/migrations";

/**
 * Review of issues 10–16:
 * - Refunds get the fencing token charges have (lease_generation): a settle
 *   commits only with the generation its holder took.
 * - The due-deliveries sweep and the webhook lag probe read PENDING deliveries
 *   by next_attempt_at; 0018 replaced the old pending index with the claim
 *   index (endpoint, event order), which cannot serve that.
 * - ledger_entries_account_idx (account_id, created_at) is a prefix of 0010's
 *   keyset index: one index less on the busiest insert table.
 */
export class Migration0019ReviewFixes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table subscription_refunds add column lease_generation integer not null default 0;
      create index webhook_deliveries_pending_due_idx on webhook_deliveries (next_attempt_at) where status = 'PENDING';
      drop index if exists ledger_entries_account_idx;
    `);
  }
}

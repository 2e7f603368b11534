import { Migration } from "@mikro-orm/migrations";

/**
 * How many subscriptions each renewal claim holds, so the renewal sweep
 * counts the claims in flight without reading every subscription. The sweep
 * bounds its look-ahead by the live claims (renewal-store.ts): counted on
 * `subscriptions` (`renewal_claimed_until >= now()`, a column no index holds,
 * so claims and releases stay HOT updates), that was a sequential scan of the
 * whole table every sweep (5 s): ~70 ms at 100,000 subscriptions, growing
 * with the table, not with the work. A row per claim (its token, the claim's
 * end in microseconds, as its jobs carry it): the claim writes it in its own
 * transaction, each job takes off the claims of its own its settle and its
 * release ended, and a row counts only until its claim runs out, so a count
 * a lost job left behind lasts no longer than that job's claims would have.
 */
export class Migration0041RenewalClaimCounts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table renewal_claims (
        token bigint primary key,
        claimed_until timestamptz not null,
        live integer not null check (live >= 0)
      );
    `);
  }
}

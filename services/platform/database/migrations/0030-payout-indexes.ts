import { Migration } from "@mikro-orm/migrations";

/**
 * Payout read paths that had no index of their own:
 * - every GET /balance sums the merchant's money in flight (pendingBalance,
 *   services/payouts/payout-queries.ts): a partial index with the query's own
 *   predicate holds only payouts in flight, so the sum reads a handful of rows
 *   however many PAID payouts a merchant has (amount and fee included so the
 *   rows need not be fetched);
 * - the operator's payout list with no filter (status in the visible ones,
 *   newest first by created_at desc, id desc: KEYSET_ORDER) walks this index
 *   in order and stops at the page's LIMIT instead of sorting every payout.
 */
export class Migration0030PayoutIndexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create index payouts_in_flight_idx on payouts (merchant_id, asset) include (amount, fee)
        where debited_at is not null and reversed_at is null and status <> 'PAID';
      create index payouts_created_idx on payouts (created_at desc, id desc);
    `);
  }
}

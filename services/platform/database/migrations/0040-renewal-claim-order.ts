import { Migration } from "@mikro-orm/migrations";

/**
 * The renewal sweep's claim (claimDueSubscriptions, subscriptions/renewals/
 * renewal-store.ts) takes the due subscriptions by the hour they fell due,
 * then by payer. No index held that order, so each claim read every due row
 * through the billing-date index and sorted them all to keep 500: at 100,000
 * due, 220 ms a claim and a sort spilled to disk, once per finished renewal
 * job (400 times for 100,000). This index is that order, bounded by the hour
 * of `now`: a claim reads the rows it takes plus the live claims ahead of
 * them. The hour is the retry's for a subscription in retries (its due date),
 * the billing date's otherwise; the expression is the claim's, byte for byte,
 * or PostgreSQL cannot match them. Every column is already indexed elsewhere,
 * so no update that was HOT stops being HOT.
 */
export class Migration0040RenewalClaimOrder extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create index subscriptions_renewal_claim_idx on subscriptions (
        date_trunc('hour', (case when status in ('PAST_DUE') then next_retry_at else next_billing_at end) at time zone 'UTC'),
        wallet_user_id,
        id
      ) where status in ('ACTIVE', 'TRIALING', 'PAST_DUE');
    `);
  }
}

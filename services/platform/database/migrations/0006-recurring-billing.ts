import { Migration } from "@mikro-orm/migrations";

/**
 * Recurring billing: what the renewal engine, dunning and the advance notice
 * keep on a subscription. The charges table of 0003 already enforces one
 * success and one attempt in flight per (subscription, period).
 */
export class Migration0006RecurringBilling extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table subscriptions
        -- The period next_billing_at starts: the one the next charge pays for.
        add column next_period_index integer not null default 0 check (next_period_index >= 0),
        -- Boundaries are periodEnd(billing_anchor, plan cadence, n - anchor_period_index): a plan change to
        -- another cadence re-anchors at the boundary where it takes effect, without renumbering periods.
        add column anchor_period_index integer not null default 0 check (anchor_period_index >= 0),
        -- Dunning: when the current run of failures began, how many scheduled retries ran, the next one.
        add column past_due_since timestamptz,
        add column retry_count integer not null default 0 check (retry_count >= 0),
        add column next_retry_at timestamptz,
        add column unpaid_at timestamptz,
        -- Advance notice: the last period whose subscription.charge_upcoming was recorded (once per period).
        add column notified_period_index integer,
        -- Claim (database time) of the sweep that enqueued this subscription's renewal job: the next sweeps
        -- skip it until the job finished (it clears the claim) or the claim ran out (the job was lost).
        add column renewal_claimed_until timestamptz,
        add constraint subscriptions_past_due_retry check (status <> 'PAST_DUE' or past_due_since is not null);

      -- Subscriptions approved before this migration: the next period is the one after their last paid one.
      update subscriptions s set
        next_period_index = coalesce((select max(c.period_index) + 1 from subscription_charges c
                                       where c.subscription_id = s.id and c.status = 'SUCCEEDED'), 0);

      -- Due retries of past-due subscriptions (next_billing_at of 0003 serves ACTIVE and TRIALING).
      create index subscriptions_retry_due_idx on subscriptions (next_retry_at) where status = 'PAST_DUE';
      -- Retry on top-up: the past-due subscriptions a credited account funds.
      create index subscriptions_past_due_funding_idx on subscriptions (wallet_user_id, funding_asset) where status = 'PAST_DUE';
    `);
  }
}

import type { Config } from "../../platform/config.ts";

/**
 * The recurring-billing settings the use cases need, for one merchant: the
 * merchant's own (settings/billing-settings.ts) over the deployment's
 * defaults from the environment (see docs/merchant-api.md, "Recurring billing").
 */
export interface BillingPolicy {
  /** Days after a renewal's first failure on which it is retried, increasing (DUNNING_RETRY_DAYS). */
  retryDays: readonly number[];
  /** Where a subscription goes when the last retry fails (DUNNING_FINAL_STATUS). */
  finalStatus: "UNPAID" | "CANCELLED";
  /** Days before a renewal that subscription.charge_upcoming is sent; 0 = never (CHARGE_NOTICE_DAYS). */
  noticeDays: number;
  /** A top-up (or a new funding asset) that covers the amount due retries a PAST_DUE subscription at once. */
  retryOnTopUp: boolean;
}

/** The deployment's defaults: what a merchant who set nothing gets. */
export const billingPolicy = (config: Config): BillingPolicy => ({
  retryDays: config.dunningRetryDays,
  finalStatus: config.dunningFinalStatus,
  noticeDays: config.chargeNoticeDays,
  retryOnTopUp: true,
});

/** Attempts one period may have: its first and one per retry of the schedule (the attempt budget). */
export const attemptBudget = (policy: BillingPolicy): number => 1 + policy.retryDays.length;

export const DAY_MS = 86_400_000;

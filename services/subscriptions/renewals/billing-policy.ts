import type { Config } from "../../platform/config.ts";

/** The recurring-billing settings the use cases need (from the environment, see README "Recurring billing"). */
export interface BillingPolicy {
  /** Days after a renewal's first failure on which it is retried, increasing (DUNNING_RETRY_DAYS). */
  retryDays: readonly number[];
  /** Where a subscription goes when the last retry fails (DUNNING_FINAL_STATUS). */
  finalStatus: "UNPAID" | "CANCELLED";
  /** Days before a renewal that subscription.charge_upcoming is sent; 0 = never (CHARGE_NOTICE_DAYS). */
  noticeDays: number;
}

export const billingPolicy = (config: Config): BillingPolicy => ({
  retryDays: config.dunningRetryDays,
  finalStatus: config.dunningFinalStatus,
  noticeDays: config.chargeNoticeDays,
});

export const DAY_MS = 86_400_000;

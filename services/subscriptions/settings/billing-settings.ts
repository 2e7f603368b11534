import type { BillingPolicy } from "../renewals/billing-policy.ts";
import type { CustomerEmails, StoredBillingSettings } from "./billing-settings-store.ts";

// The row's shape and statements are the store's; the emails worker and the policies read them through here.
export { readStoredSettings, type CustomerEmails } from "./billing-settings-store.ts";

/** What applies to a merchant: its own values over the defaults. */
export interface EffectiveBillingSettings {
  policy: BillingPolicy;
  customerEmails: CustomerEmails;
}

const DEFAULT_CUSTOMER_EMAILS: CustomerEmails = Object.freeze({ upcomingCharge: true, paymentFailed: true, receipt: true });

export function effectiveSettings(stored: StoredBillingSettings | undefined, defaults: BillingPolicy): EffectiveBillingSettings {
  return {
    policy: Object.freeze({
      retryDays: Object.freeze(stored?.dunningRetryDays ?? [...defaults.retryDays]),
      finalStatus: stored?.dunningFinalStatus ?? defaults.finalStatus,
      noticeDays: stored?.chargeNoticeDays ?? defaults.noticeDays,
      retryOnTopUp: stored?.retryOnTopUp ?? defaults.retryOnTopUp,
    }),
    customerEmails: { ...DEFAULT_CUSTOMER_EMAILS, ...(stored?.customerEmails ?? {}) },
  };
}

/** The merchant-facing record (REST body and the data of billing_settings.updated). */
export function billingSettingsRecord(settings: EffectiveBillingSettings) {
  return {
    object: "billing_settings" as const,
    dunningRetryDays: [...settings.policy.retryDays],
    dunningFinalStatus: settings.policy.finalStatus,
    chargeNoticeDays: settings.policy.noticeDays,
    retryOnTopUp: settings.policy.retryOnTopUp,
    customerEmails: { ...settings.customerEmails },
  };
}

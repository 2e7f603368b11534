import type { CustomerEmails } from "../subscriptions/settings/billing-settings.ts";

/**
 * Customer emails (issue 26): which event makes which email, and which of the
 * merchant's settings (customerEmails) turns it on. The at-risk warning
 * follows `paymentFailed`: it is the warning before that failure, and a
 * merchant who mails no failures would not want the warning either (docs/operations.md,
 * "Emails to customers").
 */
export type EmailKind = "upcoming_charge" | "charge_at_risk" | "payment_failed" | "receipt";

export const EMAIL_EVENTS: Readonly<Record<string, { kind: EmailKind; setting: keyof CustomerEmails }>> = Object.freeze({
  "subscription.charge_upcoming": { kind: "upcoming_charge", setting: "upcomingCharge" },
  "subscription.charge_at_risk": { kind: "charge_at_risk", setting: "paymentFailed" },
  "subscription.charge_failed": { kind: "payment_failed", setting: "paymentFailed" },
  "subscription.charge_succeeded": { kind: "receipt", setting: "receipt" },
});

export const EMAIL_EVENT_TYPES = Object.keys(EMAIL_EVENTS);

/** Delays before each retry of a temporary failure; the attempt after the last is parked. */
export const EMAIL_RETRY_DELAYS_MS = [30_000, 120_000, 600_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000] as const;
export const EMAIL_MAX_ATTEMPTS = EMAIL_RETRY_DELAYS_MS.length + 1;

/** How long a claimed email is left to its sender before another may send it (a sender killed mid-send). */
export const EMAIL_SEND_LEASE_MS = 60_000;

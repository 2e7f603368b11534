/**
 * What the edge and the subscriptions service agree on: status names and
 * input limits (imports nothing). The status machines themselves are status-machine.ts and
 * change-sessions/change-session-status-machine.ts.
 */
export const SUBSCRIPTION_STATUSES = [
  "PENDING_APPROVAL",
  "ACTIVE",
  "TRIALING",
  "PAUSED",
  "PAST_DUE", // a renewal charge failed; retries on the dunning schedule
  "UNPAID", //   the retries ran out (DUNNING_FINAL_STATUS=UNPAID); nothing is charged any more
  "CANCELLED",
  "EXPIRED",
] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const AUTHORIZATION_STATUSES = ["PENDING", "APPROVED", "DECLINED", "EXPIRED", "CANCELLED"] as const;
export type AuthorizationStatus = (typeof AUTHORIZATION_STATUSES)[number];

export const CHARGE_STATUSES = ["PENDING", "SUCCEEDED", "FAILED"] as const;
export type ChargeStatus = (typeof CHARGE_STATUSES)[number];
/** What a charge pays for: a first payment (period 0 on approval), a period (renewal, trial's end, retry), or a plan change's immediate charge. */
const CHARGE_PURPOSES = ["FIRST_PAYMENT", "RENEWAL", "PLAN_CHANGE"] as const;
export type ChargePurpose = (typeof CHARGE_PURPOSES)[number];

export const CHANGE_SESSION_STATUSES = ["PENDING_APPROVAL", "SCHEDULED", "APPLIED", "DECLINED", "EXPIRED", "CANCELLED"] as const;
export type ChangeSessionStatus = (typeof CHANGE_SESSION_STATUSES)[number];

export const EFFECTIVE_MODES = ["IMMEDIATE", "NEXT_BILLING"] as const;
export type EffectiveMode = (typeof EFFECTIVE_MODES)[number];

export const AUTHORIZATION_MINUTES = { min: 5, max: 10080, default: 60 } as const;
export const URL_MAX_LENGTH = 2048;
/** Change-session reasons (and the customer-facing text around them). */
export const REASON_MAX_LENGTH = 1000;

/** Statuses whose later charges a new funding asset pays (UNPAID is charged no more; ended ones never). */
export const FUNDING_CHANGEABLE_STATUSES = ["ACTIVE", "TRIALING", "PAUSED", "PAST_DUE"] as const;

/** Why a subscription ended CANCELLED (recorded by subscription-moves.ts `recordCancellation`). */
export const CANCELLATION_REASONS = ["MERCHANT_CANCELLED", "CUSTOMER_CANCELLED", "AUTHORIZATION_DECLINED", "PAYMENT_FAILED"] as const;
export type CancellationReason = (typeof CANCELLATION_REASONS)[number];

/** Why a change session ended CANCELLED. */
export const CHANGE_CANCELLATION_REASONS = ["SUBSCRIPTION_CANCELLED", "SUPERSEDED", "MERCHANT_CANCELLED", "SUBSCRIPTION_CHANGED"] as const;
export type ChangeCancellationReason = (typeof CHANGE_CANCELLATION_REASONS)[number];

/** The reason a customer's own cancel (self-service page or wallet app) stamps. */
export const CUSTOMER_CANCELLED = "CUSTOMER_CANCELLED";

/**
 * An asset cannot pay a price because, converted, it is more than one charge
 * can hold (less than 10^20 of the asset): the hosted pages name the limit.
 */
export const ASSET_AMOUNT_TOO_LARGE = "ASSET_AMOUNT_TOO_LARGE";

/**
 * Bounds of a merchant's billing settings (GET/PATCH /api/v1/settings/billing), the same as the
 * deployment's defaults (DUNNING_RETRY_DAYS, CHARGE_NOTICE_DAYS in services/platform/config.ts).
 */
export const BILLING_SETTINGS_LIMITS = {
  retryDays: { minItems: 1, maxItems: 10, minDay: 1, maxDay: 365 },
  noticeDays: { min: 0, max: 365 },
} as const;
export const DUNNING_FINAL_STATUSES = ["UNPAID", "CANCELLED"] as const;
export type DunningFinalStatus = (typeof DUNNING_FINAL_STATUSES)[number];

/** A subscription's fallback assets: at most this many, in order. */
export const FALLBACK_ASSETS_MAX = 2;

/**
 * What the subscriptions service and the gateway agree on for the customer's
 * self-service. Imports nothing.
 */

/** Statuses whose later charges a new funding asset pays (UNPAID is charged no more; ended ones never). */
export const FUNDING_CHANGEABLE_STATUSES = ["ACTIVE", "TRIALING", "PAUSED", "PAST_DUE"] as const;

export const CUSTOMER_CANCELLED = "CUSTOMER_CANCELLED";

/** What the edge and the catalog agree on (imports nothing). */
export const PLAN_INTERVALS = ["DAY", "WEEK", "MONTH", "YEAR"] as const;
export type PlanInterval = (typeof PLAN_INTERVALS)[number];

export const PLAN_STATUSES = ["ACTIVE", "ARCHIVED"] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

/** 409 for a new subscription or change session on an archived plan. */
export const PLAN_ARCHIVED = "PLAN_ARCHIVED";

/** Price and cadence: fixed when the plan is created, never changed (a database trigger enforces it). */
export const PLAN_IMMUTABLE_FIELDS = ["amount", "currency", "interval", "intervalCount", "trialDays", "maximumChargeAmount"] as const;

export const PLAN_IMMUTABLE_MESSAGE = "cannot be changed: price changes go through a new plan and a change session";

/** What the edge and the catalog agree on (imports nothing). */
export const PLAN_INTERVALS = ["DAY", "WEEK", "MONTH", "YEAR"] as const;
export type PlanInterval = (typeof PLAN_INTERVALS)[number];

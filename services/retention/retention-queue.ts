import { sweepKind } from "../platform/queue/job-kind.ts";

/**
 * The retention sweep (sweep-retention.ts), in the `scheduler` group, every
 * RECONCILE_INTERVAL_MS (5 min by default): months are created three ahead and
 * dropped once a month, so a slow cadence is plenty; it also runs after every
 * sandbox clock advance, like every sweep. Handler: jobs.ts.
 */
export const retentionSweep = sweepKind({ name: "retention.sweep", group: "scheduler", every: (c) => c.reconcileIntervalMs });

export const retentionJobKinds = [retentionSweep];

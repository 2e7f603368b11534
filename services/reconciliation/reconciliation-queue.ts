import { sweepKind } from "../platform/queue/job-kind.ts";

/**
 * Every RECONCILE_INTERVAL_MS: reconciliation (reconcile.ts), in the
 * `scheduler` group. Handler: jobs.ts.
 */
export const reconciliationSweep = sweepKind({ name: "reconciliation.sweep", group: "scheduler", every: (c) => c.reconcileIntervalMs });

export const reconciliationJobKinds = [reconciliationSweep];

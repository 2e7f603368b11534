import { defineJob } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import { reconcile } from "./reconcile.ts";

/**
 * Every RECONCILE_INTERVAL_MS: reconciliation (reconcile.ts). New anomalies
 * are recorded and logged at error level by the use case; a clean run is silent.
 */
export const reconciliationSweepJob = defineJob<Record<string, never>>({
  name: "reconciliation.sweep",
  group: "scheduler",
  every: (c) => c.reconcileIntervalMs,
  async handle(deps) {
    await reconcile(contextFor(deps), deps.logger);
  },
});

export const reconciliationJobs = [reconciliationSweepJob];

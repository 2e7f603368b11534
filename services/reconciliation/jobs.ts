import { handleSweep } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import { reconcile } from "./reconcile.ts";
import { reconciliationSweep } from "./reconciliation-queue.ts";
import { fullPassDue } from "./reconciliation-window-store.ts";

/**
 * Each run is incremental, except one a RECONCILE_FULL_INTERVAL_MS over all
 * history (the proof that nothing outside the windows' reasoning slipped).
 * Whether it is due is read from Postgres (reconciliation_runs), so a lost
 * Redis or a restart neither skips nor repeats it. New anomalies are recorded
 * and logged at error level by the use case; a clean run is silent.
 */
export const reconciliationJobs = [
  handleSweep(reconciliationSweep, async (deps) => {
    const ctx = contextFor(deps);
    const { config } = deps;
    const scope = (await fullPassDue(ctx.em, config.reconcileFullIntervalMs)) ? "FULL" : "INCREMENTAL";
    const res = await reconcile(ctx, deps.logger, { scope, overlapMs: config.reconcileOverlapMs, fullTimeoutMs: config.reconcileFullTimeoutMs });
    // billing_reconciliation_anomalies_total: each anomaly counted once, when first recorded.
    for (const kind of res.newKinds) deps.metrics?.reconciliationAnomalies.inc({ check: kind });
  }),
];

import { handleSweep } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import { reconcile } from "./reconcile.ts";
import { reconciliationSweep } from "./reconciliation-queue.ts";

/** New anomalies are recorded and logged at error level by the use case; a clean run is silent. */
export const reconciliationJobs = [
  handleSweep(reconciliationSweep, async (deps) => {
    const res = await reconcile(contextFor(deps), deps.logger);
    // billing_reconciliation_anomalies_total: each anomaly counted once, when first recorded.
    for (const kind of res.newKinds) deps.metrics?.reconciliationAnomalies.inc({ check: kind });
  }),
];

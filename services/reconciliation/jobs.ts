import { handleSweep } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import { reconcile } from "./reconcile.ts";
import { reconciliationSweep } from "./reconciliation-queue.ts";

/** New anomalies are recorded and logged at error level by the use case; a clean run is silent. */
export const reconciliationJobs = [
  handleSweep(reconciliationSweep, async (deps) => {
    await reconcile(contextFor(deps), deps.logger);
  }),
];

import type { Worker } from "bullmq";
import type { Logger } from "../services/platform/logger.ts";
import { OutageLog } from "../services/platform/outage-log.ts";
import { isOutage } from "../services/platform/dependency-outage.ts";

/**
 * Job failures caused by an outage (Postgres, a service, Redis) are logged
 * once when the outage starts and once when a job succeeds again, with how
 * many attempts failed meanwhile; other failures are logged one by one.
 */
export function logJobFailures(worker: Worker, logger: Logger): void {
  const outage = new OutageLog(logger, "job dependencies");
  worker.on("failed", (job, err) => {
    if (isOutage(err)) outage.failed(err, { job: job?.name });
    else logger.warn({ err: err.message, job: job?.name, id: job?.id }, "job failed");
  });
  worker.on("completed", () => {
    if (outage.down) outage.succeeded();
  });
}

import type { JobDefinition } from "../services/platform/queue/define-job.ts";
import { orderJobs } from "../services/orders/jobs.ts";
import { webhookJobs } from "../services/events/jobs.ts";
import { subscriptionJobs } from "../services/subscriptions/jobs.ts";
import { changeSessionJobs } from "../services/subscriptions/change-sessions/change-session-jobs.ts";
import { renewalJobs } from "../services/subscriptions/renewals/jobs.ts";
import { reconciliationJobs } from "../services/reconciliation/jobs.ts";

/**
 * Every job kind of every domain. Start-up fails when two share a name, so a
 * handler can be neither missing nor doubled.
 */
export const ALL_JOBS: JobDefinition<any>[] = [...webhookJobs, ...orderJobs, ...subscriptionJobs, ...changeSessionJobs, ...renewalJobs, ...reconciliationJobs];

export function jobsByName(jobs: JobDefinition<any>[] = ALL_JOBS): Map<string, JobDefinition<any>> {
  const byName = new Map<string, JobDefinition<any>>();
  for (const job of jobs) {
    if (byName.has(job.name)) throw new Error(`job ${job.name} is registered twice`);
    byName.set(job.name, job);
  }
  return byName;
}

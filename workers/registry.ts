import type { AnyHandler } from "../services/platform/queue/define-job.ts";
import type { JobKind, SweepKind } from "../services/platform/queue/job-kind.ts";
import { orderJobs } from "../services/orders/jobs.ts";
import { payoutJobs } from "../services/payouts/jobs.ts";
import { webhookJobs } from "../services/events/jobs.ts";
import { subscriptionJobs } from "../services/subscriptions/jobs.ts";
import { changeSessionJobs } from "../services/subscriptions/change-sessions/change-session-jobs.ts";
import { renewalJobs } from "../services/subscriptions/renewals/jobs.ts";
import { reconciliationJobs } from "../services/reconciliation/jobs.ts";
import { ALL_JOB_KINDS } from "../services/job-kinds.ts";
import { emailJobs } from "../services/emails/jobs.ts";
import { retentionJobs } from "../services/retention/jobs.ts";

/** Every handler of every domain. */
export const ALL_JOBS: readonly AnyHandler[] = [
  ...webhookJobs,
  ...orderJobs,
  ...subscriptionJobs,
  ...changeSessionJobs,
  ...renewalJobs,
  ...reconciliationJobs,
  ...payoutJobs,
  ...emailJobs,
  ...retentionJobs,
];

/**
 * Binds handlers to the declared job kinds. Start-up fails when a declared
 * kind has no handler, when one has two, or when a handler's kind is not
 * declared: every job that can be enqueued is run by exactly one handler.
 * A test may pass a subset of kinds and handlers (its own jobs).
 */
export function buildJobRegistry(
  handlers: readonly AnyHandler[] = ALL_JOBS,
  kinds: readonly (JobKind<any> | SweepKind)[] = ALL_JOB_KINDS,
): Map<string, AnyHandler> {
  const declared = new Map(kinds.map((k) => [k.name, k]));
  const byName = new Map<string, AnyHandler>();
  for (const handler of handlers) {
    const name = handler.kind.name;
    if (byName.has(name)) throw new Error(`job ${name} has two handlers`);
    if (declared.get(name) !== handler.kind) throw new Error(`job ${name} has a handler but is not declared in services/job-kinds.ts`);
    byName.set(name, handler);
  }
  const missing = [...declared.keys()].filter((name) => !byName.has(name));
  if (missing.length > 0) throw new Error(`jobs without a handler: ${missing.join(", ")}`);
  return byName;
}

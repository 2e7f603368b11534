import type { JobKind, SweepKind } from "./platform/queue/job-kind.ts";
import { isSweep } from "./platform/queue/define-job.ts";
import { webhookJobKinds } from "./events/webhook-queue.ts";
import { orderJobKinds } from "./orders/order-queue.ts";
import { subscriptionJobKinds } from "./subscriptions/subscription-queue.ts";
import { changeSessionJobKinds } from "./subscriptions/change-sessions/change-session-queue.ts";
import { renewalJobKinds } from "./subscriptions/renewals/renewal-queue.ts";
import { reconciliationJobKinds } from "./reconciliation/reconciliation-queue.ts";
import { payoutJobKinds } from "./payouts/payout-queue.ts";
import { emailJobKinds } from "./emails/email-queue.ts";
import { retentionJobKinds } from "./retention/retention-queue.ts";

/**
 * Every job kind of every domain (declarations only, no handlers): the
 * workers' registry checks each has exactly one handler, and the sandbox
 * runs every sweep at once after a clock advance.
 */
export const ALL_JOB_KINDS: readonly (JobKind<any> | SweepKind)[] = [
  ...webhookJobKinds,
  ...orderJobKinds,
  ...subscriptionJobKinds,
  ...changeSessionJobKinds,
  ...renewalJobKinds,
  ...reconciliationJobKinds,
  ...payoutJobKinds,
  ...emailJobKinds,
  ...retentionJobKinds,
];

export const ALL_SWEEPS: readonly SweepKind[] = ALL_JOB_KINDS.filter(isSweep);

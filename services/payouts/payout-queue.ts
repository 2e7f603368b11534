import { jobId, jobKind, ONE_SHOT, sweepKind } from "../platform/queue/job-kind.ts";
import type { Queues } from "../platform/queue/queues.ts";

/**
 * The payouts' jobs (group `payments`; handlers: jobs.ts). The job only makes
 * the hand-over to the chain prompt: the SUBMIT call is a row, and the sweep
 * finds what a lost job or a crash left (and PROCESSING payouts whose
 * confirmations are due), so nothing in Redis needs to survive.
 */
export const submitPayoutKind = jobKind<{ payoutId: string }>({
  name: "payouts.submit",
  group: "payments",
  id: (p) => jobId("payout-submit", p.payoutId),
  options: ONE_SHOT,
});

/** Every sweepIntervalMs: PENDING payout calls (debits, hand-overs, reversals) due, then PROCESSING payouts due a chain check. */
export const payoutsSweep = sweepKind({ name: "payouts.sweep", group: "payments", every: (c) => c.sweepIntervalMs });

export const payoutJobKinds = [submitPayoutKind, payoutsSweep];

/** After commit only. Queues.add never throws: a lost enqueue is the sweep's. */
export async function scheduleSubmit(queues: Queues, payoutId: string): Promise<void> {
  await queues.add(submitPayoutKind, { payoutId });
}

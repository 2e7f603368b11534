import { handleJob, handleSweep } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import { observeChain, submitPayout } from "./payout-actions.ts";
import { sweepPayoutCalls } from "./payout-calls.ts";
import { expireDueClaims } from "./order-refunds/expire-claims.ts";
import { payoutsSweep, submitPayoutKind } from "./payout-queue.ts";
import { processPayoutPorts } from "./process-ports.ts";

/** Handlers of the payouts' jobs (kinds and enqueueing: payout-queue.ts). */
export const payoutJobs = [
  handleJob(submitPayoutKind, async (deps, payload) => {
    await deps.clock.sync();
    await submitPayout(contextFor(deps), processPayoutPorts(deps), payload.payoutId);
  }),
  handleSweep(payoutsSweep, async (deps) => {
    await deps.clock.sync();
    const ports = processPayoutPorts(deps);
    // Each failure stays on its row (failures, back-off, last_error) for a later sweep.
    await sweepPayoutCalls(contextFor(deps), ports);
    // Claims expire even when the chain step fails (a signer down): one step's trouble must not hold the other's due work.
    try {
      await observeChain(contextFor(deps), ports);
    } finally {
      await expireDueClaims(contextFor(deps), ports);
    }
  }),
];

import { defineJob, jobId, type JobDeps } from "../../platform/queue/define-job.ts";
import { contextFor } from "../../platform/service-deps.ts";
import { subscriptionPorts } from "../ports.ts";
import { claimDueRenewals, releaseRenewalClaim, type DueRenewal } from "./find-due-renewals.ts";
import { renewSubscription } from "./renew-subscription.ts";
import { findUpcomingCharges, notifyUpcomingCharge } from "./notify-upcoming-charge.ts";
import { retryPastDueOnTopUp } from "./retry-on-top-up.ts";

/**
 * Recurring billing's jobs, all in the `renewals` worker group so it scales on
 * its own. Postgres is the truth: the sweep finds everything due; the jobs
 * spread the work over the workers. Every job is safe to run twice.
 * Renewal jobs are removed when they end, so a deterministic id only
 * de-duplicates while one waits or runs, never blocks a later run.
 */
const ONE_SHOT = { removeOnComplete: true, removeOnFail: true } as const;

/** Charges whatever is due for one subscription (jobId renew-<id>-<period>-<attempt>). */
export const renewSubscriptionJob = defineJob<{ subscriptionId: string }>({
  name: "renewals.renew-subscription",
  group: "renewals",
  async handle(deps, payload) {
    await deps.clock.sync();
    await renewSubscription(contextFor(deps), subscriptionPorts(deps), { subscriptionId: payload.subscriptionId });
    // Only when it ran through: after an error (a service down) the claim stays until it runs out, a natural back-off.
    await releaseRenewalClaim(contextFor(deps), payload.subscriptionId);
  },
});

/** subscription.charge_upcoming for one subscription's next period (jobId notice-<id>-<period>). */
export const notifyUpcomingChargeJob = defineJob<{ subscriptionId: string }>({
  name: "renewals.notify-upcoming-charge",
  group: "renewals",
  async handle(deps, payload) {
    await deps.clock.sync();
    await notifyUpcomingCharge(contextFor(deps), subscriptionPorts(deps), payload.subscriptionId);
  },
});

/**
 * Enqueued by the wallet after a credit to a wallet user's account commits:
 * past-due subscriptions funded by it are retried at once. Only makes the
 * retry prompt: if the job is lost, the scheduled retry still runs.
 */
export const accountCreditedJob = defineJob<{ walletUserId: string; asset: string }>({
  name: "renewals.account-credited",
  group: "renewals",
  async handle(deps, payload) {
    await deps.clock.sync();
    await retryPastDueOnTopUp(contextFor(deps), subscriptionPorts(deps), payload.walletUserId, payload.asset);
  },
});

/** For the wallet: call after the credit's transaction committed (never throws). */
export function enqueueAccountCredited(deps: Pick<JobDeps, "queues">, credit: { walletUserId: string; asset: string; transactionId: string }) {
  return deps.queues.add(accountCreditedJob, { walletUserId: credit.walletUserId, asset: credit.asset }, { jobId: jobId("account-credited", credit.transactionId), ...ONE_SHOT });
}

/**
 * Every sweepIntervalMs, on the service clock: claim every subscription due
 * for a renewal or a retry and enqueue its job; enqueue the advance notices
 * that are due.
 */
export const renewalsSweepJob = defineJob<Record<string, never>>({
  name: "renewals.sweep",
  group: "renewals",
  every: (c) => c.sweepIntervalMs,
  async handle(deps) {
    await deps.clock.sync();
    await claimDueRenewals(contextFor(deps), (due) => enqueueRenewals(deps, due), await renewalBacklog(deps));
    const upcoming = await findUpcomingCharges(contextFor(deps), deps.config.chargeNoticeDays);
    await Promise.all(
      upcoming.map((u) => deps.queues.add(notifyUpcomingChargeJob, { subscriptionId: u.subscriptionId }, { jobId: jobId("notice", u.subscriptionId, String(u.periodIndex)), ...ONE_SHOT })),
    );
  },
});

/** Jobs waiting or running in the renewals queue, this sweep excluded; undefined when Redis cannot say. */
async function renewalBacklog(deps: JobDeps): Promise<number | undefined> {
  try {
    const counts = await deps.queues.queue("renewals").getJobCounts("waiting", "prioritized", "active");
    return (counts.waiting ?? 0) + (counts.prioritized ?? 0) + Math.max(0, (counts.active ?? 0) - 1);
  } catch {
    return undefined;
  }
}

async function enqueueRenewals(deps: JobDeps, due: DueRenewal[]): Promise<void> {
  await Promise.all(
    due.map((d) =>
      deps.queues.add(renewSubscriptionJob, { subscriptionId: d.subscriptionId }, { jobId: jobId("renew", d.subscriptionId, String(d.periodIndex), String(d.attempt)), ...ONE_SHOT }),
    ),
  );
}

export const renewalJobs = [renewalsSweepJob, renewSubscriptionJob, notifyUpcomingChargeJob, accountCreditedJob];

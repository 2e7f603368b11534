import { handleJob, handleSweep, type JobDeps } from "../../platform/queue/define-job.ts";
import { contextFor } from "../../platform/service-deps.ts";
import { processSubscriptionPorts } from "../ports.ts";
import { claimDueRenewals, releaseRenewalClaim } from "./find-due-renewals.ts";
import { renewSubscription } from "./renew-subscription.ts";
import { findUpcomingCharges, notifyUpcomingCharge } from "./notify-upcoming-charge.ts";
import { retryPastDueOnTopUp } from "./retry-on-top-up.ts";
import { accountCreditedKind, notifyUpcomingChargeKind, renewalsSweep, renewSubscriptionKind } from "./renewal-queue.ts";

/** Handlers of the `renewals` group (kinds and enqueueing: renewal-queue.ts). */
export const renewalJobs = [
  handleSweep(renewalsSweep, async (deps) => {
    await deps.clock.sync();
    // One round trip per claimed batch (up to 500), not one per renewal.
    await claimDueRenewals(
      contextFor(deps),
      (due) => deps.queues.addBulk(renewSubscriptionKind, due.map((d) => ({ subscriptionId: d.subscriptionId, periodIndex: d.periodIndex, attempt: d.attempt }))).then(() => {}),
      await renewalBacklog(deps),
    );
    const upcoming = await findUpcomingCharges(contextFor(deps), deps.config.chargeNoticeDays);
    await deps.queues.addBulk(notifyUpcomingChargeKind, upcoming.map((u) => ({ subscriptionId: u.subscriptionId, periodIndex: u.periodIndex })));
  }),
  handleJob(renewSubscriptionKind, async (deps, payload) => {
    await deps.clock.sync();
    await renewSubscription(contextFor(deps), processSubscriptionPorts(deps), { subscriptionId: payload.subscriptionId });
    // Only when it ran through: after an error (a service down) the claim stays until it runs out, a natural back-off.
    await releaseRenewalClaim(contextFor(deps), payload.subscriptionId);
  }),
  handleJob(notifyUpcomingChargeKind, async (deps, payload) => {
    await deps.clock.sync();
    await notifyUpcomingCharge(contextFor(deps), processSubscriptionPorts(deps), payload.subscriptionId);
  }),
  handleJob(accountCreditedKind, async (deps, payload) => {
    await deps.clock.sync();
    await retryPastDueOnTopUp(contextFor(deps), processSubscriptionPorts(deps), payload.walletUserId, payload.asset);
  }),
];

/** Jobs waiting or running in the renewals queue, this sweep excluded; undefined when Redis cannot say. */
async function renewalBacklog(deps: JobDeps): Promise<number | undefined> {
  try {
    const counts = await deps.queues.queue("renewals").getJobCounts("waiting", "prioritized", "active");
    return (counts.waiting ?? 0) + (counts.prioritized ?? 0) + Math.max(0, (counts.active ?? 0) - 1);
  } catch {
    return undefined;
  }
}

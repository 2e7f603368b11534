import { handleJob, handleSweep, type JobDeps } from "../../platform/queue/define-job.ts";
import { contextFor } from "../../platform/service-deps.ts";
import { processSubscriptionPorts } from "../ports.ts";
import {
  claimDueRenewals,
  claimNextRenewals,
  handOnSlots,
  heldRenewalClaims,
  releaseClaimsOfLostJobs,
  releaseRenewalClaims,
  renewalSets,
  type EnqueueRenewals,
} from "./find-due-renewals.ts";
import { renewSubscription } from "./renew-subscription.ts";
import { renewBatch, RENEWAL_JOB_SIZE } from "./renew-batch.ts";
import { findUpcomingCharges, notifyUpcomingCharge } from "./notify-upcoming-charge.ts";
import { retryPastDueOnTopUp } from "./retry-on-top-up.ts";
import { accountCreditedKind, accountDebitedKind, notifyUpcomingChargeKind, renewalsSweep, renewBatchKind, renewSubscriptionKind } from "./renewal-queue.ts";
import { recheckChargesAtRisk } from "./charge-at-risk.ts";

/**
 * One bulk add per claim (up to the look-ahead), one job per set of at most RENEWAL_JOB_SIZE (renewalSets), each with
 * the claim's token. A set's job id is the set's alone, so the add does nothing while a job of the same set waits or
 * runs. Waiting, that job renews the rows all the same (its settle ends whichever claim they hold). Running, it is
 * past its settle (before it, the rows' own claims keep them from being claimed again): it will not renew them again,
 * and the new claim would wait to run out (60 s) with no job. Such a set gets a job of its own (`again`).
 */
const enqueueRenewalSets =
  (deps: JobDeps): EnqueueRenewals =>
  async (due, claim, more) => {
    const sets = renewalSets(due, RENEWAL_JOB_SIZE).map((set) => ({ subscriptionIds: set.map((d) => d.subscriptionId), claim, more }));
    if (!(await deps.queues.addBulk(renewBatchKind, sets))) return;
    const again = await runningElsewhere(deps, sets, claim).catch((err: unknown) => {
      deps.logger.warn({ err: (err as Error).message }, "renewals: could not check the sets' jobs; a set whose job was running waits for its claim to run out");
      return [];
    });
    if (again.length > 0)
      await deps.queues.addBulk(
        renewBatchKind,
        again.map((set) => ({ ...set, again: claim })),
      );
  };

/**
 * The sets whose job, by id, runs (or ran) under another claim, or is gone: all but those whose job is this claim's
 * or waits. One look at the job's state, so a job that ends between the look-up and the look counts as ended.
 */
async function runningElsewhere<S extends { subscriptionIds: string[] }>(deps: JobDeps, sets: S[], claim: string): Promise<S[]> {
  const queue = deps.queues.queue(renewBatchKind.group);
  const found = await Promise.all(
    sets.map(async (set) => {
      const job = await queue.getJob(renewBatchKind.id(set));
      if (!job) return true;
      if ((job.data as { claim?: string }).claim === claim) return false;
      return !WAITS.has(await job.getState());
    }),
  );
  return sets.filter((_, i) => found[i]);
}

/** A job in these states has not started: it renews its set's rows whatever claim they hold by then. */
const WAITS = new Set(["waiting", "prioritized", "delayed", "waiting-children"]);

/** Handlers of the `renewals` group (kinds and enqueueing: renewal-queue.ts). */
export const renewalJobs = [
  handleSweep(renewalsSweep, async (deps) => {
    await deps.clock.sync();
    await releaseClaimsOfLostJobs(contextFor(deps), deps.queues, deps.logger);
    await claimDueRenewals(contextFor(deps), enqueueRenewalSets(deps));
    const upcoming = await findUpcomingCharges(contextFor(deps), deps.config.chargeNoticeDays);
    await deps.queues.addBulk(
      notifyUpcomingChargeKind,
      upcoming.map((u) => ({ subscriptionId: u.subscriptionId, periodIndex: u.periodIndex })),
    );
  }),
  handleJob(renewBatchKind, async (deps, payload) => {
    await deps.clock.sync();
    const held = await heldRenewalClaims(contextFor(deps), payload.subscriptionIds, payload.claim);
    const result = await renewBatch(contextFor(deps), processSubscriptionPorts(deps), payload.subscriptionIds);
    // billing_renewal_errors_total: each subscription that failed alone, once (renewBatch logged it).
    if (result.errored > 0) deps.metrics?.renewalErrors.inc(result.errored);
    // Only when it ran through (a subscription that failed alone included): after an error (a service down) the claims stay until they run out, a natural back-off.
    await releaseRenewalClaims(contextFor(deps), payload.subscriptionIds, payload.claim, held);
    // A set of a claim that took all its room suggests more is due (a job queued before `more` existed: a full set):
    // its slots claim the next set now rather than at the next interval. The set is renewed already: a failed hand-on
    // is logged, not the job's failure (the periodic sweep claims them).
    if (payload.more ?? payload.subscriptionIds.length >= RENEWAL_JOB_SIZE) {
      await handOnSlots(contextFor(deps), held, payload.claim)
        .then((slots) => (slots > 0 ? claimNextRenewals(contextFor(deps), enqueueRenewalSets(deps), slots) : 0))
        .catch((err: unknown) => deps.logger.warn({ err: (err as Error).message }, "renewals: the next set could not be claimed; the sweep will"));
    }
  }),
  handleJob(renewSubscriptionKind, async (deps, payload) => {
    await deps.clock.sync();
    await renewSubscription(contextFor(deps), processSubscriptionPorts(deps), { subscriptionId: payload.subscriptionId });
    await releaseRenewalClaims(contextFor(deps), [payload.subscriptionId]);
  }),
  handleJob(notifyUpcomingChargeKind, async (deps, payload) => {
    await deps.clock.sync();
    await notifyUpcomingCharge(contextFor(deps), processSubscriptionPorts(deps), payload.subscriptionId);
  }),
  handleJob(accountCreditedKind, async (deps, payload) => {
    await deps.clock.sync();
    await retryPastDueOnTopUp(contextFor(deps), processSubscriptionPorts(deps), payload.walletUserId, payload.asset);
    await recheckChargesAtRisk(contextFor(deps), processSubscriptionPorts(deps), payload.walletUserId, payload.asset);
  }),
  handleJob(accountDebitedKind, async (deps, payload) => {
    await deps.clock.sync();
    await recheckChargesAtRisk(contextFor(deps), processSubscriptionPorts(deps), payload.walletUserId, payload.asset);
  }),
];

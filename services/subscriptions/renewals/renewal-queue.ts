import { createHash } from "node:crypto";
import { jobId, jobKind, ONE_SHOT, sweepKind } from "../../platform/queue/job-kind.ts";
import type { Queues } from "../../platform/queue/queues.ts";

/**
 * Recurring billing's jobs as producers see them (handlers: jobs.ts), all in
 * the `renewals` worker group so it scales on its own. Postgres is the truth:
 * the sweep finds everything due; the jobs spread the work over the workers.
 * Every job is safe to run twice. Jobs are removed when they end, so a
 * deterministic id only de-duplicates while one waits or runs, never blocks a
 * later run.
 */

/**
 * Charges whatever is due for a set of subscriptions the sweep claimed
 * (renew-batch.ts), then ends the claims that `claim` (the claim's token)
 * took. The id is derived from the set alone, so re-adding the same set while
 * its job waits or runs adds nothing, whatever the claim: a backlog whose
 * claims ran out is claimed again in the same order and cut into the same
 * sets, and with the claim in the id each came back as a second job of the
 * same subscriptions, which met the first at every lock. The job that runs
 * ends the claims of the rows it renews in their settle, whichever claim they
 * hold.
 * `more`: the claim took all the room it was given, so more may be due and
 * the job hands its slots on when it ends (jobs.ts).
 * `claim` and `more` are absent from jobs queued by earlier versions.
 * `again`: the claim's token, in the id too, for a set whose job was still
 * running when its rows were claimed anew (jobs.ts, enqueueRenewalSets).
 */
export const renewBatchKind = jobKind<{ subscriptionIds: string[]; claim?: string; more?: boolean; again?: string }>({
  name: "renewals.renew-batch",
  group: "renewals",
  id: (p) =>
    jobId(
      "renew-batch",
      String(p.subscriptionIds.length),
      createHash("sha256").update(p.subscriptionIds.join(",")).digest("hex").slice(0, 32),
      ...(p.again === undefined ? [] : [p.again]),
    ),
  options: ONE_SHOT,
});

/** Charges whatever is due for one subscription; one id per period and attempt (kept for jobs queued by earlier versions and for tests). */
export const renewSubscriptionKind = jobKind<{ subscriptionId: string; periodIndex: number; attempt: number }>({
  name: "renewals.renew-subscription",
  group: "renewals",
  id: (p) => jobId("renew", p.subscriptionId, String(p.periodIndex), String(p.attempt)),
  options: ONE_SHOT,
});

/** subscription.charge_upcoming for one subscription's next period. */
export const notifyUpcomingChargeKind = jobKind<{ subscriptionId: string; periodIndex: number }>({
  name: "renewals.notify-upcoming-charge",
  group: "renewals",
  id: (p) => jobId("notice", p.subscriptionId, String(p.periodIndex)),
  options: ONE_SHOT,
});

/**
 * Enqueued by the wallet after a credit to a wallet user's account commits:
 * past-due subscriptions funded by it are retried at once. Only makes the
 * retry prompt: if the job is lost, the scheduled retry still runs.
 */
export const accountCreditedKind = jobKind<{ walletUserId: string; asset: string; transactionId: string }>({
  name: "renewals.account-credited",
  group: "renewals",
  id: (p) => jobId("account-credited", p.transactionId),
  options: ONE_SHOT,
});

/**
 * Enqueued by the renewal engine after its charges commit, for the accounts
 * they debited that also fund (or back as a fallback) another subscription
 * whose announced charge is still to come: that charge's risk is assessed
 * again (charge-at-risk.ts). Only prompt: the next notice or credit assesses too.
 */
export const accountDebitedKind = jobKind<{ walletUserId: string; asset: string; chargeId: string }>({
  name: "renewals.account-debited",
  group: "renewals",
  id: (p) => jobId("account-debited", p.chargeId),
  options: ONE_SHOT,
});

/**
 * Every sweepIntervalMs, on the service clock: claim every subscription due
 * for a renewal or a retry and enqueue its job; enqueue the advance notices
 * that are due.
 */
export const renewalsSweep = sweepKind({ name: "renewals.sweep", group: "renewals", every: (c) => c.sweepIntervalMs });

export const renewalJobKinds = [renewalsSweep, renewBatchKind, renewSubscriptionKind, notifyUpcomingChargeKind, accountCreditedKind, accountDebitedKind];

/** For the wallet: call after the credit's transaction committed (never throws). */
export function enqueueAccountCredited(queues: Queues, credit: { walletUserId: string; asset: string; transactionId: string }): Promise<boolean> {
  return queues.add(accountCreditedKind, credit);
}

import type { UseCaseContext } from "../../platform/use-case.ts";
import type { Logger } from "../../platform/logger.ts";
import type { Queues } from "../../platform/queue/queues.ts";
import { checkDataLossMarker } from "../../platform/queue/data-loss-marker.ts";
import { claimDueSubscriptions, countLiveRenewalClaims, releaseLiveRenewalClaims, releaseRenewalClaimsOf } from "./renewal-store.ts";

/**
 * Subscriptions claimed per query; how many may be claimed at once (waiting
 * in the queue or being renewed: the backlog the sweep tops up to); and how
 * long a claim holds (database time) if its job never reports back.
 */
const RENEWAL_BATCH = 500;
const RENEWAL_LOOKAHEAD = 2500;
const RENEWAL_CLAIM_SECONDS = 60;

export interface DueRenewal {
  subscriptionId: string;
  periodIndex: number;
  /** 1 for a period's first attempt, then one more per scheduled retry. */
  attempt: number;
}

/**
 * The renewal sweep's query: claims, in batches, the subscriptions due on the
 * service clock (billing date come for ACTIVE/TRIALING, retry come for
 * PAST_DUE), the oldest hour first and by payer within it (renewal-store.ts), and hands them to `enqueue` (one renewal job each).
 * `for update skip locked` lets concurrent sweeps and running renewals pass
 * each other; the claim keeps the next sweeps from enqueueing the same
 * subscription again while its job waits in the queue or runs. A live claim
 * is never taken: the job releases it when it is done, and a lost or failed
 * job's claim runs out (releaseClaimsOfLostJobs hands back at once those that
 * Redis lost with its data). The work is bounded by the live claims, counted
 * in Postgres (issue 21: counting the queue's jobs mistook a running batch
 * for the sweep itself whenever the watchdog ran the sweep in its process,
 * and re-claimed that batch's subscriptions): it claims only what keeps them
 * under `lookahead`, so a large backlog is enqueued once and drained before
 * any claim runs out. Returns how many were claimed.
 */
export async function claimDueRenewals(ctx: UseCaseContext, enqueue: (due: DueRenewal[]) => Promise<void>, lookahead = RENEWAL_LOOKAHEAD): Promise<number> {
  return claimUpTo(ctx, enqueue, lookahead - (await countLiveRenewalClaims(ctx.em)));
}

/**
 * A renewal job that ran through hands its slots on: it released `slots`
 * claims, so it claims as many of the next due subscriptions, and the live
 * claims stay where the last count left them. No count: it reads every
 * subscription (~70 ms at 100,000 due), and a backlog's jobs each topped it up
 * through a sweep that counted first. The slots are the live claims the job ended
 * (releaseRenewalClaims): a job run twice hands on nothing the second time.
 */
export function claimNextRenewals(ctx: UseCaseContext, enqueue: (due: DueRenewal[]) => Promise<void>, slots: number): Promise<number> {
  return claimUpTo(ctx, enqueue, slots);
}

async function claimUpTo(ctx: UseCaseContext, enqueue: (due: DueRenewal[]) => Promise<void>, room: number): Promise<number> {
  const claimed = new Map<string, ClaimedRenewal>();
  try {
    while (room > 0) {
      const rows = await claimDueSubscriptions(ctx.em, ctx.clock.now(), Math.min(RENEWAL_BATCH, room), RENEWAL_CLAIM_SECONDS);
      for (const r of rows) claimed.set(r.id, r);
      room -= rows.length;
      if (rows.length < RENEWAL_BATCH) break;
    }
  } finally {
    // What was claimed is queued even when a later query failed: its claims would otherwise hold it unrenewed until they run out.
    if (claimed.size > 0) {
      // The whole claim grouped by merchant and payer before it is cut into jobs: the jobs of one claim then charge
      // disjoint wallet accounts (a payer spans at most two neighbours), so they do not queue on each other's account
      // locks. Grouped per query of 500, each job of a backlog held half the payers of its query, and the jobs of the
      // next queries waited on them (at 3,000 renewals of 50 payers, 7.8 s of lock waits against 2.6 s).
      const sorted = [...claimed.values()].sort(byMerchantAndPayer);
      await enqueue(sorted.map((r) => ({ subscriptionId: r.id, periodIndex: r.next_period_index, attempt: r.retry_count + 1 })));
    }
  }
  return claimed.size;
}

type ClaimedRenewal = Awaited<ReturnType<typeof claimDueSubscriptions>>[number];

function byMerchantAndPayer(a: ClaimedRenewal, b: ClaimedRenewal): number {
  if (a.merchant_id !== b.merchant_id) return a.merchant_id < b.merchant_id ? -1 : 1;
  return a.wallet_user_id < b.wallet_user_id ? -1 : a.wallet_user_id > b.wallet_user_id ? 1 : 0;
}

/**
 * Claims whose jobs Redis lost with its data (FLUSHALL, a restart without
 * persistence) would otherwise wait up to RENEWAL_CLAIM_SECONDS for nothing:
 * when the marker kept in Redis is gone, every claim taken before is released
 * so this sweep claims the subscriptions again at once. One process does it
 * per loss (the marker is set back first). A batch still running through the
 * loss may then be renewed by two jobs at once: the charge protocol charges
 * each period once all the same. Returns how many claims were released.
 */
export async function releaseClaimsOfLostJobs(ctx: UseCaseContext, queues: Queues, logger: Logger): Promise<number> {
  if ((await checkDataLossMarker(queues, "renewal-claims")) !== "lost") return 0;
  const released = await releaseLiveRenewalClaims(ctx.em);
  if (released.length > 0) logger.warn({ released: released.length }, "Redis lost its data: renewal claims taken before are released and claimed again");
  return released.length;
}

/**
 * Called when a renewal run ends: the next sweep may claim the subscriptions again as soon as they are due.
 * Returns how many live claims it ended: the slots the run may hand on (a run again, its claims ended already, has none).
 */
export async function releaseRenewalClaims(ctx: UseCaseContext, subscriptionIds: readonly string[]): Promise<number> {
  if (subscriptionIds.length === 0) return 0;
  return releaseRenewalClaimsOf(ctx.em, subscriptionIds);
}

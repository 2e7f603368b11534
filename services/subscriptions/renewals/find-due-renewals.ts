import type { UseCaseContext } from "../../platform/use-case.ts";
import type { Logger } from "../../platform/logger.ts";
import type { Queues } from "../../platform/queue/queues.ts";
import { checkDataLossMarker } from "../../platform/queue/data-loss-marker.ts";
import {
  claimDueSubscriptions,
  countClaim,
  countLiveClaimsOf,
  countLiveRenewalClaims,
  isClaimLive,
  releaseLiveRenewalClaims,
  releaseRenewalClaimsOf,
} from "./renewal-store.ts";

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
  /** Whose wallet accounts its charge locks: merchant and payer (renewalSets keeps a payer's renewals together). */
  payer: string;
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
export async function claimDueRenewals(ctx: UseCaseContext, enqueue: EnqueueRenewals, lookahead = RENEWAL_LOOKAHEAD): Promise<number> {
  return claimUpTo(ctx, enqueue, lookahead - (await countLiveRenewalClaims(ctx.em)));
}

/**
 * A renewal job that ran through hands its slots on: it ended `slots` live
 * claims, so it claims as many of the next due subscriptions, and the live
 * claims stay where the last count left them. No count of every claim: the
 * slots are exact (the claims it ended), where a count misses the claims
 * other jobs are taking at that moment, and a backlog's jobs each topped the
 * look-ahead up through a sweep that counted first. The slots: handOnSlots.
 */
export function claimNextRenewals(ctx: UseCaseContext, enqueue: EnqueueRenewals, slots: number): Promise<number> {
  return claimUpTo(ctx, enqueue, slots);
}

/**
 * Receives a claim: its subscriptions grouped by merchant and payer, its token (each job releases with it:
 * releaseRenewalClaims), and whether it took all the room it was given (then more may be due: its jobs hand their
 * slots on, handOnSlots).
 */
export type EnqueueRenewals = (due: DueRenewal[], claim: string, more: boolean) => Promise<void>;

async function claimUpTo(ctx: UseCaseContext, enqueue: EnqueueRenewals, room: number): Promise<number> {
  if (room <= 0) return 0;
  const wanted = room;
  // One transaction, so one now(): every row of the claim holds the same end, which is its token. A failed query
  // takes the whole claim back with it.
  const claimed = await ctx.em.transactional(async (em) => {
    const rows = new Map<string, ClaimedRenewal>();
    while (room > 0) {
      const batch = await claimDueSubscriptions(em, ctx.clock.now(), Math.min(RENEWAL_BATCH, room), RENEWAL_CLAIM_SECONDS);
      for (const r of batch) rows.set(r.id, r);
      room -= batch.length;
      if (batch.length < RENEWAL_BATCH) break;
    }
    if (rows.size > 0) await countClaim(em, rows.size, RENEWAL_CLAIM_SECONDS);
    return [...rows.values()];
  });
  if (claimed.length === 0) return 0;
  // The whole claim grouped by merchant and payer before it is cut into jobs (renewalSets): the jobs of one claim then
  // charge disjoint wallet accounts, so they do not queue on each other's account locks. Grouped per query of 500,
  // each job of a backlog held half the payers of its query, and the jobs of the next queries waited on them (at 3,000
  // renewals of 50 payers, 7.8 s of lock waits against 2.6 s).
  const sorted = claimed.sort(byMerchantAndPayer);
  await enqueue(
    sorted.map((r) => ({
      subscriptionId: r.id,
      periodIndex: r.next_period_index,
      attempt: r.retry_count + 1,
      payer: `${r.merchant_id}/${r.wallet_user_id}`,
    })),
    claimed[0]!.claim,
    claimed.length >= wanted,
  );
  return claimed.length;
}

/**
 * Cuts a claim (grouped by payer) into the sets of at most `size` that its
 * jobs renew: whole payers, so that two jobs of a claim never charge the same
 * wallet account, except a payer with more than `size` renewals alone, whose
 * sets follow each other on its account lock as its charges must. Cut every
 * `size` instead, a payer straddled two neighbouring sets in most cases, and
 * each set's ChargeBatch waited for its neighbour's commit: the jobs of a
 * claim ran one after another (B8, 10,000 due over 50 payers of 200: 3.2 s of
 * waits on the payers' account locks in 16 s of statements).
 */
export function renewalSets(due: readonly DueRenewal[], size: number): DueRenewal[][] {
  if (!Number.isInteger(size) || size < 1) throw new Error(`renewalSets: a set's size must be a positive integer, not ${size}`);
  const sets: DueRenewal[][] = [];
  let current: DueRenewal[] = [];
  for (let start = 0; start < due.length; ) {
    let end = start + 1;
    while (end < due.length && due[end]!.payer === due[start]!.payer) end++;
    const payer = due.slice(start, end);
    if (current.length > 0 && current.length + payer.length > size) {
      sets.push(current);
      current = [];
    }
    for (let i = 0; i < payer.length; i += size) {
      current.push(...payer.slice(i, i + size));
      if (current.length >= size) {
        sets.push(current);
        current = [];
      }
    }
    start = end;
  }
  if (current.length > 0) sets.push(current);
  return sets;
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
 * Called when a renewal run starts: how many of its subscriptions hold a live
 * claim of its own (`claim`; any live claim for a job queued before claims had
 * tokens). The run's settle or release ends each of them. Counted before the
 * run, since its settle ends the claims of the subscriptions it renews in the
 * same row update.
 */
export function heldRenewalClaims(ctx: UseCaseContext, subscriptionIds: readonly string[], claim?: string): Promise<number> {
  if (subscriptionIds.length === 0) return Promise.resolve(0);
  return countLiveClaimsOf(ctx.em, subscriptionIds, claim);
}

/**
 * Called when a renewal run has released its claims: how many slots it hands
 * on. The `held` live claims it counted at its start, if its claim is live
 * still: all rows of a claim run out together, so then none of them ran out
 * or was taken again meanwhile, and the live claims fell by exactly `held`.
 * None once the claim ran out (a sweep since may have counted the room and
 * filled it: handing on too would claim past the look-ahead), and none for a
 * job queued before claims had tokens (its count may hold a later claim's
 * rows); the periodic sweep claims what is due then.
 */
export async function handOnSlots(ctx: UseCaseContext, held: number, claim?: string): Promise<number> {
  if (held === 0 || claim === undefined) return 0;
  return (await isClaimLive(ctx.em, claim)) ? held : 0;
}

/**
 * Called when a renewal run ends: the next sweep may claim the subscriptions again as soon as they are due.
 * Only the claims `claim` took end (all of theirs without one: a job queued before claims had tokens); a claim
 * that ran out and was taken again is the later job's. `held`: the live claims of its own the run counted when it
 * started (heldRenewalClaims), which its settle and this release end, so its claim's count loses them all.
 * Returns how many live claims it ended (those its settle did not end already: still due, or renewed one by one).
 */
export async function releaseRenewalClaims(ctx: UseCaseContext, subscriptionIds: readonly string[], claim?: string, held?: number): Promise<number> {
  if (subscriptionIds.length === 0) return 0;
  return releaseRenewalClaimsOf(ctx.em, subscriptionIds, claim, held);
}

import type { UseCaseContext } from "../../platform/use-case.ts";

/**
 * Subscriptions claimed per query; how many may wait claimed ahead of the
 * workers (the queue backlog the sweep tops up to); and how long a claim
 * holds (database time) if its job never reports back.
 */
export const RENEWAL_BATCH = 500;
export const RENEWAL_LOOKAHEAD = 2500;
export const RENEWAL_CLAIM_SECONDS = 60;

export interface DueRenewal {
  subscriptionId: string;
  periodIndex: number;
  /** 1 for a period's first attempt, then one more per scheduled retry. */
  attempt: number;
}

/**
 * The renewal sweep's query: claims, in batches, the subscriptions due on the
 * service clock (billing date come for ACTIVE/TRIALING, retry come for
 * PAST_DUE), oldest first, and hands them to `enqueue` (one renewal job each).
 * `for update skip locked` lets concurrent sweeps and running renewals pass
 * each other; the claim keeps the next sweeps from enqueueing the same
 * subscription again while its job waits in the queue. The job releases the
 * claim when it is done; a lost job's claim runs out and the subscription is
 * claimed again. Returns how many were claimed.
 */
export async function claimDueRenewals(
  ctx: UseCaseContext,
  enqueue: (due: DueRenewal[]) => Promise<void>,
  /**
   * Subscriptions waiting or being renewed in the queue (undefined when the
   * queue cannot be asked). The sweep's work is bounded by it: it claims only
   * what keeps the backlog under RENEWAL_LOOKAHEAD, so a large backlog is enqueued once
   * and drained before any claim runs out. With nothing queued, a claim that
   * is still live has no job behind it (Redis lost its data): it is taken again.
   */
  queueBacklog?: number,
): Promise<number> {
  let claimed = 0;
  let room = queueBacklog === undefined ? RENEWAL_LOOKAHEAD : Math.max(0, RENEWAL_LOOKAHEAD - queueBacklog);
  const orphansToo = queueBacklog === 0;
  while (room > 0) {
    const now = ctx.clock.now();
    const rows = await ctx.em.execute<{ id: string; next_period_index: number; retry_count: number; merchant_id: string; wallet_user_id: string }[]>(
      `with due as (
         select id from subscriptions
          where ((status in ('ACTIVE','TRIALING') and next_billing_at <= ?) or (status = 'PAST_DUE' and next_retry_at <= ?))
            and (renewal_claimed_until is null or renewal_claimed_until < now() or ?)
          order by next_billing_at, id
          limit ?
          for update skip locked)
       update subscriptions s set renewal_claimed_until = now() + make_interval(secs => ?)
         from due where s.id = due.id
       returning s.id, s.next_period_index, s.retry_count, s.merchant_id, s.wallet_user_id`,
      [now, now, orphansToo, Math.min(RENEWAL_BATCH, room), RENEWAL_CLAIM_SECONDS],
    );
    if (rows.length === 0) break;
    claimed += rows.length;
    room -= rows.length;
    // Grouped by merchant and payer: consecutive jobs then charge mostly disjoint wallet accounts, so their locks rarely meet.
    rows.sort((a, b) => (a.merchant_id === b.merchant_id ? (a.wallet_user_id < b.wallet_user_id ? -1 : a.wallet_user_id > b.wallet_user_id ? 1 : 0) : a.merchant_id < b.merchant_id ? -1 : 1));
    await enqueue(rows.map((r) => ({ subscriptionId: r.id, periodIndex: r.next_period_index, attempt: r.retry_count + 1 })));
    if (rows.length < RENEWAL_BATCH || orphansToo) break;
  }
  return claimed;
}

/** Called when a renewal run ends: the next sweep may claim the subscriptions again as soon as they are due. */
export async function releaseRenewalClaims(ctx: UseCaseContext, subscriptionIds: readonly string[]): Promise<void> {
  if (subscriptionIds.length === 0) return;
  await ctx.em.execute(
    `update subscriptions set renewal_claimed_until = null where id in (${subscriptionIds.map(() => "?").join(", ")}) and renewal_claimed_until is not null`,
    [...subscriptionIds],
  );
}

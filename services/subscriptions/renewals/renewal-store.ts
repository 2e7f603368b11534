import type { EntityManager } from "@mikro-orm/postgresql";
import { oldestOf } from "../../platform/observability/due-work.ts";
import { statusIn } from "../../platform/status-machine.ts";
import type { SubscriptionRow } from "../entities.ts";
import { DUE_FOR_RENEWAL, DUE_STATUSES, RENEWAL_DUE_AT } from "../due-predicates.ts";
import { subscriptionMachine } from "../status-machine.ts";
import { PRICED_COLUMNS } from "../pricing/period-price.ts";

/**
 * The statements of renewals: the sweep's claims on due subscriptions, what a
 * renewal batch reads of its set, the advance notices and their rechecks, and
 * the renewal sweeps' lag probes. Each takes the caller's EntityManager, so
 * it runs in the caller's transaction (if any).
 */

/** Billed on their billing date: what the notices announce and the at-risk rechecks assess. */
const BILLED = (column: string) => statusIn(column, subscriptionMachine.statesFrom("pause"));

/** Renewed by a charge: billed on their date or retried on their dunning date. */
const CHARGED = (column: string) => statusIn(column, subscriptionMachine.statesFrom("charge_succeeded"));

/** The hour a due subscription fell due, as the claim orders them: the expression of migration 0040's index. */
const CLAIM_HOUR = `date_trunc('hour', (${RENEWAL_DUE_AT()}) at time zone 'UTC')`;

/** A subscription the sweep claimed: its next period, what its job is grouped by, and the claim's token. */
interface ClaimedRenewal {
  id: string;
  next_period_index: number;
  retry_count: number;
  merchant_id: string;
  wallet_user_id: string;
  /** The claim's end in microseconds since the epoch (text): the same for every row claimed in one transaction. */
  claim: string;
}

/** A claim's end as its token: exact (microseconds, as stored), comparable without a time zone. */
const CLAIM_TOKEN = (column: string) => `(extract(epoch from ${column}) * 1000000)::bigint`;

/** A claim's end (database time; `?`: its seconds): one expression for its rows and its count, so both carry the same token. */
const CLAIM_END = "now() + make_interval(secs => ?)";

/**
 * Claims up to `limit` subscriptions due at `now` for `claimSeconds`
 * (database time): the oldest hour of due dates first (a retry's date for a
 * subscription in retries, its billing date otherwise), and within an hour by
 * payer. `for update skip locked` lets concurrent sweeps and running
 * renewals pass each other; a live claim is never taken.
 *
 * The order is an index's (migration 0040, CLAIM_HOUR the same expression),
 * read up to the hour of `now`: the claim reads what it takes and the live
 * claims ahead of it, not every due row sorted (220 ms a claim at 100,000
 * due).
 *
 * By payer within the hour: the sweep tops its backlog up as jobs finish,
 * with claims of a job or two each, and a job's ChargeBatch locks its payers'
 * accounts until it commits. Claimed in billing-date order, each of those jobs
 * held some of every payer's subscriptions and waited on every job in flight
 * (B8, 10,000 due over 50 payers: 250 accounts locked a call, 10-15 s of lock
 * waits); by payer, consecutive claims hold different payers (a payer spans
 * at most two neighbours). No subscription waits longer than the backlog of
 * its hour takes; an older hour still goes first.
 */
export function claimDueSubscriptions(em: EntityManager, now: Date, limit: number, claimSeconds: number): Promise<ClaimedRenewal[]> {
  return em.execute<ClaimedRenewal[]>(
    `with due as (
       select id from subscriptions
        where ${statusIn("status", DUE_STATUSES)}
          and ${CLAIM_HOUR} <= date_trunc('hour', ?::timestamptz at time zone 'UTC')
          and ${DUE_FOR_RENEWAL()}
          and (renewal_claimed_until is null or renewal_claimed_until < now())
        order by ${CLAIM_HOUR}, wallet_user_id, id
        limit ?
        for update skip locked)
     update subscriptions s set renewal_claimed_until = ${CLAIM_END}
       from due where s.id = due.id
     returning s.id, s.next_period_index, s.retry_count, s.merchant_id, s.wallet_user_id, ${CLAIM_TOKEN("s.renewal_claimed_until")}::text as claim`,
    [now, now, now, limit, claimSeconds],
  );
}

/**
 * Counts a claim just taken in this transaction (claimDueSubscriptions, the
 * same `now()` and `claimSeconds`, so the same end and token as its rows):
 * `renewal_claims` holds how many subscriptions each live claim holds
 * (migration 0041), what countLiveRenewalClaims sums.
 */
export async function countClaim(em: EntityManager, rows: number, claimSeconds: number): Promise<void> {
  await em.execute(
    `insert into renewal_claims (token, claimed_until, live)
     values (${CLAIM_TOKEN(CLAIM_END)}, ${CLAIM_END}, ?)
     on conflict (token) do update set live = renewal_claims.live + excluded.live`,
    [claimSeconds, claimSeconds, rows],
  );
}

/**
 * How many subscriptions are under a live claim, due or not: a job's rows
 * renewed one by one stop being due before the job releases their claims;
 * counted as due only, they made room for more than the look-ahead each time
 * a sweep ran meanwhile, and the jobs' hand-ons (claimNextRenewals) kept that
 * surplus. Summed over the live claims' counts (countClaim; each job takes
 * off its own as it ends: releaseRenewalClaimsOf), not counted on
 * `subscriptions`: a sequential scan of every subscription each sweep (no
 * index holds the claim's end, so that claims and releases stay HOT updates).
 * The counts of claims that ran out go at the same time.
 */
export async function countLiveRenewalClaims(em: EntityManager): Promise<number> {
  const [row] = await em.execute<{ n: number }[]>(
    `with ended as (delete from renewal_claims where claimed_until < now() or live = 0)
     select coalesce(sum(live), 0)::int as n from renewal_claims where claimed_until >= now()`,
  );
  return Number(row?.n ?? 0);
}

/** Ends every live renewal claim at once, and their counts; returns the subscriptions released. */
export function releaseLiveRenewalClaims(em: EntityManager): Promise<{ id: string }[]> {
  return em.execute<{ id: string }[]>(
    `with counts as (delete from renewal_claims)
     update subscriptions set renewal_claimed_until = null where renewal_claimed_until >= now() returning id`,
  );
}

/** How many of these subscriptions hold a live claim that `claim` took (any live claim, without one). */
export async function countLiveClaimsOf(em: EntityManager, subscriptionIds: readonly string[], claim?: string): Promise<number> {
  const [row] = await em.execute<{ n: number }[]>(
    `select count(*)::int as n from subscriptions
      where id in (${subscriptionIds.map(() => "?").join(", ")}) and renewal_claimed_until >= now()${claim === undefined ? "" : ` and ${CLAIM_TOKEN("renewal_claimed_until")} = ?::bigint`}`,
    [...subscriptionIds, ...(claim === undefined ? [] : [claim])],
  );
  return Number(row?.n ?? 0);
}

/** Whether a claim has not run out yet (database time): its token is its end. */
export async function isClaimLive(em: EntityManager, claim: string): Promise<boolean> {
  const [row] = await em.execute<{ live: boolean }[]>(`select ?::bigint >= ${CLAIM_TOKEN("now()")} as live`, [claim]);
  return row?.live === true;
}

/**
 * Ends the renewal claims of these subscriptions that `claim` took (any claim
 * they hold, without one: jobs queued before claims had tokens); returns how
 * many of them were live. A claim that ran out and was taken again by a later
 * sweep is the later job's: fenced by the token, a slow job's release leaves
 * it. The update compares the claim it read again (a row claimed anew between
 * the read and the update is re-checked on its new version and left).
 *
 * The claims' counts (countClaim) lose what ended: with `claim` and `held`
 * (a job: the live claims of its own it counted when it started), `held` off
 * that claim's, since its settle ended those of the rows it renewed before
 * this release and the release ends the rest; otherwise each live claim
 * ended here off its own claim's count.
 */
export async function releaseRenewalClaimsOf(em: EntityManager, subscriptionIds: readonly string[], claim?: string, held?: number): Promise<number> {
  // A job that held none (run again, or its claim taken over) ends none of its own: nothing to take off.
  const byJob = claim !== undefined && held !== undefined && held > 0;
  const taken = byJob
    ? "select ?::bigint as token, ?::int as n"
    : `select ${CLAIM_TOKEN("until")} as token, count(*)::int as n from ended where live group by 1`;
  const rows = await em.execute<{ live: boolean }[]>(
    `with held as (
       select id, renewal_claimed_until as until from subscriptions
        where id in (${subscriptionIds.map(() => "?").join(", ")}) and renewal_claimed_until is not null${claim === undefined ? "" : ` and ${CLAIM_TOKEN("renewal_claimed_until")} = ?::bigint`}),
     ended as (
       update subscriptions s set renewal_claimed_until = null from held
        where s.id = held.id and s.renewal_claimed_until = held.until
       returning held.until, held.until >= now() as live),
     counted as (
       update renewal_claims c set live = greatest(c.live - t.n, 0) from (${taken}) t where c.token = t.token)
     select live from ended`,
    [...subscriptionIds, ...(claim === undefined ? [] : [claim]), ...(byJob ? [claim, held] : [])],
  );
  return rows.filter((r) => r.live).length;
}

/** What names a subscription's renewal terms (plan, funding asset, discount and credit): read before any lock. */
type RenewalTermsRow = { id: string; merchant_id: string; plan_id: string; funding_asset: string | null; has_fallback: boolean } & Record<string, unknown>;

/** Of `ids`, those a renewal may charge (with a funding asset), as RenewalTermsRow: no entity to build. */
export function chargeableSubscriptions(em: EntityManager, ids: readonly string[]): Promise<RenewalTermsRow[]> {
  return em.execute<RenewalTermsRow[]>(
    `select id, merchant_id, plan_id, funding_asset, cardinality(fallback_assets) > 0 as has_fallback, ${PRICED_COLUMNS} from subscriptions
      where id in (${ids.map(() => "?").join(", ")}) and ${CHARGED("status")} and funding_asset is not null`,
    [...ids],
  );
}

/** Writes a locked plain subscription row's new billing anchor (and its touch: updated_at, version). */
export async function saveBillingAnchor(em: EntityManager, sub: SubscriptionRow): Promise<void> {
  await em.execute("update subscriptions set billing_anchor = ?, anchor_period_index = ?, updated_at = ?, version = ? where id = ?", [
    sub.billingAnchor,
    sub.anchorPeriodIndex,
    sub.updatedAt,
    sub.version,
    sub.id,
  ]);
}

/**
 * Up to `limit` billed subscriptions whose next billing date is within their
 * merchant's notice days (its settings, or `defaultNoticeDays` for a merchant
 * that set none) after `now` and whose upcoming period has not been announced
 * yet, soonest first. One query for every merchant (the settings row joined).
 *
 * The billing-date index is read between `now` and `now` plus the longest
 * notice any merchant gives: with only each row's own bound (known after the
 * join), the scan went on through every later billing date, so each sweep read
 * every billed subscription (100,000 renewed ones at the scale-out bench).
 */
export function subscriptionsToNotify(
  em: EntityManager,
  now: Date,
  defaultNoticeDays: number,
  limit: number,
): Promise<{ id: string; next_period_index: number }[]> {
  return em.execute<{ id: string; next_period_index: number }[]>(
    `select s.id, s.next_period_index from subscriptions s
       left join merchant_billing_settings m on m.merchant_id = s.merchant_id
      where ${BILLED("s.status")} and s.next_billing_at > ?
        and s.next_billing_at <= ?::timestamptz
              + make_interval(days => (select greatest(?::int, coalesce(max(charge_notice_days), 0)) from merchant_billing_settings))
        and coalesce(m.charge_notice_days, ?) > 0
        and s.next_billing_at <= ?::timestamptz + make_interval(days => coalesce(m.charge_notice_days, ?))
        and (s.notified_period_index is null or s.notified_period_index < s.next_period_index)
      order by s.next_billing_at, s.id limit ?`,
    [now, now, defaultNoticeDays, defaultNoticeDays, now, defaultNoticeDays, limit],
  );
}

/**
 * Of these wallet users, the (user, asset) pairs that pay a billed
 * subscription's announced, not yet charged, period (billing after `now`),
 * from its funding asset or a fallback. Migration 0035's partial index is
 * this predicate (status and notified_period_index): keep the two alike.
 */
export function accountsPayingAnnouncedCharges(
  em: EntityManager,
  walletUserIds: readonly string[],
  now: Date,
): Promise<{ wallet_user_id: string; asset: string }[]> {
  return em.execute<{ wallet_user_id: string; asset: string }[]>(
    `select distinct s.wallet_user_id, a.asset
       from subscriptions s cross join lateral unnest(array[s.funding_asset]::text[] || s.fallback_assets) as a(asset)
      where s.wallet_user_id in (${walletUserIds.map(() => "?").join(", ")})
        and ${BILLED("s.status")} and s.notified_period_index = s.next_period_index and s.next_billing_at > ?`,
    [...walletUserIds, now],
  );
}

/** The renewal sweep's lag probe: when the oldest subscription due at `now` became due. */
export function oldestDueRenewal(em: EntityManager, now: Date): Promise<Date | null> {
  return oldestOf(em, `select min(${RENEWAL_DUE_AT()}) as oldest from subscriptions where ${DUE_FOR_RENEWAL()}`, [now, now]);
}

import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { sqlStatus } from "../platform/status-machine.ts";
import { CHARGE_STATUSES } from "../subscriptions/contract.ts";
import { REFUND_STATUSES } from "../subscriptions/refunds/contract.ts";
import { CREDIT_STATUSES } from "../orders/contract.ts";

/**
 * Which rows a reconciliation run checks.
 *
 * A full pass compares all history; its cost grows with every month kept, so
 * the runs an operator or the job make every few minutes are incremental:
 * they check the rows created since `since`, the owners such rows name (money
 * landed for an old charge), the owners of every anomaly recorded before (so
 * an anomaly stays listed until it is gone), and the small tables (payouts,
 * order refunds, the PAYOUTS account) in full. What a row can still change
 * into after it leaves that window is covered by where the window starts:
 *
 *  - A row is judged once it is no longer in flight: the next window starts
 *    no later than the oldest charge, refund or credit still PENDING, unless
 *    an anomaly is recorded against it (parked, stale): recorded owners are
 *    checked by every run, so one that settles late is judged then.
 *  - A settled charge changes later only through a refund (a parked one may
 *    settle long after it was made): every touched refund's charge is checked
 *    with it. Statuses are final otherwise.
 *  - A row committed after a run took its snapshot was still checked by the
 *    next run: the next window starts at the service time of a run that began
 *    at least RECONCILE_OVERLAP_MS (database time) before this one. That
 *    covers a transaction open that long, clocks that disagree by that much,
 *    and a sandbox clock moved forward meanwhile (created_at is service time:
 *    a process still on the old offset writes rows older than the new "now",
 *    never older than a run that began before the move).
 *  - With no run that old (a new deployment), a run leaves no start: until
 *    one does, runs are full.
 *
 * Each run records where the next may start (reconciliation_runs); a later
 * run starts at the latest a finished run left, each one being a safe start
 * on its own (it was read in that run's snapshot, and a run that never
 * finished leaves none).
 */
const CHARGE_PENDING = sqlStatus(CHARGE_STATUSES, "PENDING");
const REFUND_PENDING = sqlStatus(REFUND_STATUSES, "PENDING");
const CREDIT_PENDING = sqlStatus(CREDIT_STATUSES, "PENDING");

/** Runs kept (a month): enough for the overlap's lookup and the full pass's interval (both bounded below that). */
const RUNS_KEPT_DAYS = 31;

/** Where the next incremental run starts: the latest start a finished run left (null: none, the run is full). */
export async function windowStart(em: EntityManager): Promise<string | null> {
  const [row] = await em.execute<{ since: string | null }[]>("select max(next_since)::text as since from reconciliation_runs where finished_at is not null");
  return row!.since;
}

/**
 * Records that a run starts (before its checks): its database time, and its
 * service time as database time plus the offset the service clock adds (the
 * sandbox's; zero otherwise), so a CLI on a host whose clock is off does not
 * move later windows. Returns the run's id.
 */
export async function startRun(em: EntityManager, scope: "INCREMENTAL" | "FULL", since: string | null, serviceOffsetMs: number): Promise<string> {
  const id = randomUUID();
  await em.execute(
    `with gone as (delete from reconciliation_runs where started_at < now() - make_interval(days => ${RUNS_KEPT_DAYS}))
     insert into reconciliation_runs (id, scope, since, started_at, service_started_at)
     values (?, ?, ?::timestamptz, now(), now() + make_interval(secs => ? / 1000.0))`,
    [id, scope, since, Math.trunc(serviceOffsetMs)],
  );
  return id;
}

/**
 * Where the run after this one may start. The checks' first statement, in
 * their snapshot: a row still PENDING there either holds the next start back
 * or is an anomaly already recorded (parked, stale: its owner is checked by
 * every run until mended), so it never falls between two runs.
 */
export async function nextWindowStart(em: EntityManager, overlapMs: number): Promise<string | null> {
  const [row] = await em.execute<{ next_since: string | null }[]>(
    `with anchor as (
       select service_started_at as at from reconciliation_runs
        where started_at <= now() - make_interval(secs => ? / 1000.0) order by started_at desc limit 1
     ), in_flight as (
       select least(
         (select min(w.created_at) from subscription_charges w where w.status = ${CHARGE_PENDING} and ${notRecorded("subscription_charge")}),
         (select min(w.created_at) from subscription_refunds w where w.status = ${REFUND_PENDING} and ${notRecorded("refund")}),
         (select min(w.created_at) from payment_order_credits w where w.status = ${CREDIT_PENDING} and ${notRecorded("order_credit")})) as at
     )
     -- least() skips nulls: nothing in flight leaves the anchor; no anchor leaves no start of this run's own
     select (select least(a.at, f.at) from anchor a, in_flight f)::text as next_since`,
    [overlapMs],
  );
  return row!.next_since;
}

/** SQL: the PENDING row `w` has no anomaly recorded against it. */
const notRecorded = (ownerType: string) =>
  `not exists (select 1 from reconciliation_anomalies a where a.owner_type = '${ownerType}' and a.owner_id = w.id::text)`;

/** Records how a run ended; only a finished run's next start is ever used. */
export async function finishRun(em: EntityManager, id: string, result: { nextSince: string | null; checked: number; anomalies: number }): Promise<void> {
  await em.execute("update reconciliation_runs set next_since = ?::timestamptz, finished_at = now(), checked = ?, anomalies = ? where id = ?", [
    result.nextSince,
    result.checked,
    result.anomalies,
    id,
  ]);
}

/**
 * Whether the job's full pass is due: none started within `intervalMs`. A
 * pass started counts even if it never finished (a timeout), so one that
 * cannot finish is tried once an interval, not on every tick, and a pass
 * longer than the job's period is not started twice beside itself.
 */
export async function fullPassDue(em: EntityManager, intervalMs: number): Promise<boolean> {
  const rows = await em.execute<{ one: number }[]>(
    `select 1 as one from reconciliation_runs where scope = 'FULL' and started_at > now() - make_interval(secs => ? / 1000.0) limit 1`,
    [intervalMs],
  );
  return rows.length === 0;
}

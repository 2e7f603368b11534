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
 *    no later than the oldest charge, refund or credit still PENDING (parked
 *    ones are anomalies, checked through the recorded anomalies).
 *  - A settled charge changes later only through a refund, which is a new row
 *    (its charge is checked with it); statuses are final otherwise.
 *  - A row committed after a run took its snapshot was still checked by the
 *    next run: the next window starts at the service time of a run that began
 *    at least RECONCILE_OVERLAP_MS (database time) before this one. That
 *    covers a transaction open that long, clocks that disagree by that much,
 *    and a sandbox clock moved forward meanwhile (created_at is service time:
 *    a process still on the old offset writes rows older than the new "now",
 *    never older than a run that began before the move).
 *  - With no such run (a new deployment, or none for a month) the run is full.
 *
 * Each run records where the next may start (reconciliation_runs); a later
 * run starts at the latest of those, each one being a safe start on its own.
 */
export interface ReconciliationWindow {
  /** The first created_at this run checks; null: all history (a full pass). Times are PostgreSQL's text, to the microsecond. */
  readonly since: string | null;
  /** Database time when the window was read (before the checks' snapshot). */
  readonly startedAt: string;
  /** Service time then. */
  readonly serviceStartedAt: Date;
  /** Where the run after this one may start. */
  readonly nextSince: string | null;
}

const CHARGE_PENDING = sqlStatus(CHARGE_STATUSES, "PENDING");
const REFUND_PENDING = sqlStatus(REFUND_STATUSES, "PENDING");
const CREDIT_PENDING = sqlStatus(CREDIT_STATUSES, "PENDING");

/** Runs kept (a month): enough for the overlap's lookup and the full pass's interval (both bounded below that). */
const RUNS_KEPT_DAYS = 31;

/**
 * Reads the window of a run about to start. Run it before the checks: a row
 * in flight now starts the next window, so it is checked again once settled.
 */
export async function openWindow(em: EntityManager, scope: "INCREMENTAL" | "FULL", serviceNow: Date, overlapMs: number): Promise<ReconciliationWindow> {
  const [row] = await em.execute<{ started_at: string; since: string | null; next_since: string | null }[]>(
    `with anchor as (
       select service_started_at as at from reconciliation_runs
        where started_at <= now() - make_interval(secs => ? / 1000.0) order by started_at desc limit 1
     ), in_flight as (
       select least((select min(created_at) from subscription_charges where status = ${CHARGE_PENDING} and parked_at is null),
                    (select min(created_at) from subscription_refunds where status = ${REFUND_PENDING} and parked_at is null),
                    (select min(created_at) from payment_order_credits where status = ${CREDIT_PENDING} and parked_at is null)) as at
     )
     select now()::text as started_at,
            (select max(next_since) from reconciliation_runs)::text as since,
            -- least() skips nulls: nothing in flight leaves the anchor; no anchor leaves no start (the next run is full)
            (select least(a.at, f.at) from anchor a, in_flight f)::text as next_since`,
    [overlapMs],
  );
  const { started_at, since, next_since } = row!;
  return { since: scope === "FULL" ? null : since, startedAt: started_at, serviceStartedAt: serviceNow, nextSince: next_since };
}

/** Records a finished run (and forgets runs older than a month). */
export async function recordRun(em: EntityManager, window: ReconciliationWindow, result: { checked: number; anomalies: number }): Promise<void> {
  await em.execute(
    `with gone as (delete from reconciliation_runs where started_at < now() - make_interval(days => ${RUNS_KEPT_DAYS}))
     insert into reconciliation_runs (id, scope, since, started_at, service_started_at, next_since, finished_at, checked, anomalies)
     values (?, ?, ?::timestamptz, ?::timestamptz, ?, ?::timestamptz, now(), ?, ?)`,
    [
      randomUUID(),
      window.since === null ? "FULL" : "INCREMENTAL",
      window.since,
      window.startedAt,
      window.serviceStartedAt,
      window.nextSince,
      result.checked,
      result.anomalies,
    ],
  );
}

/** Whether the full pass over all history is due: none recorded within `intervalMs`. */
export async function fullPassDue(em: EntityManager, intervalMs: number): Promise<boolean> {
  const rows = await em.execute<{ one: number }[]>(
    `select 1 as one from reconciliation_runs where scope = 'FULL' and started_at > now() - make_interval(secs => ? / 1000.0) limit 1`,
    [intervalMs],
  );
  return rows.length === 0;
}

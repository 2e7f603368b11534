import type { EntityManager } from "@mikro-orm/postgresql";
import { LEASED_INSERT } from "../../platform/wallet-calls/wallet-call.ts";
import { asEntityRows, selectColumns } from "../../platform/database/prepared.ts";
import { SubscriptionCharge, type ChargeRow } from "../entities.ts";
import { sqlStatus, statusIn } from "../../platform/status-machine.ts";
import { chargeMachine } from "./charge-status.ts";
import { executeBound } from "../../platform/database/bound-values.ts";

/** The statements of subscription charges (subscription_charges); each caller passes its own EntityManager, so they run in its transaction. */

// The statuses these statements name, checked against the machine when the module loads.
const PENDING = sqlStatus(chargeMachine.statuses, "PENDING");
const SUCCEEDED = sqlStatus(chargeMachine.statuses, "SUCCEEDED");

/** The last attempt number of a subscription's period charge so far (plan changes' charges aside); 0 when none. */
export async function lastPeriodAttempt(em: EntityManager, subscriptionId: string, periodIndex: number): Promise<number> {
  const rows = await em.execute<{ attempt: number | null }[]>(
    "select max(attempt) as attempt from subscription_charges where subscription_id = ? and period_index = ? and change_session_id is null",
    [subscriptionId, periodIndex],
  );
  return Number(rows[0]?.attempt ?? 0);
}

/**
 * Per subscription, the attempts at its next period so far: the last attempt
 * number (lastPeriodAttempt, for a set). One in flight is
 * subscriptionsWithChargeInFlight's to find.
 *
 * The subscriptions are named by `= any` (an index condition on the period
 * attempts' key) and their periods joined after: a list of (subscription,
 * period) pairs is not one, and was planned as a scan of every charge (678 ms
 * a set, 40 % of PostgreSQL's time at 100,000 renewals).
 */
export async function lastNextPeriodAttempts(
  em: EntityManager,
  subs: readonly { id: string; nextPeriodIndex: number }[],
): Promise<Map<string, { last: number }>> {
  if (subs.length === 0) return new Map();
  const rows = await em.execute<{ subscription_id: string; attempt: number }[]>(
    `select c.subscription_id, max(c.attempt) as attempt
       from subscription_charges c
       join jsonb_to_recordset(?::jsonb) as w(id uuid, period int) on c.subscription_id = w.id and c.period_index = w.period
      where c.change_session_id is null and c.subscription_id = any(string_to_array(?, ',')::uuid[])
      group by c.subscription_id`,
    [JSON.stringify(subs.map((s) => ({ id: s.id, period: s.nextPeriodIndex }))), subs.map((s) => s.id).join(",")],
  );
  return new Map(rows.map((r) => [r.subscription_id, { last: Number(r.attempt) }]));
}

/** Which of `subscriptionIds` has a charge in flight (PENDING), whatever it pays for. */
export async function subscriptionsWithChargeInFlight(em: EntityManager, subscriptionIds: readonly string[]): Promise<Set<string>> {
  const rows = await em.execute<{ subscription_id: string }[]>(
    `select distinct subscription_id from subscription_charges
      where status = ${PENDING} and subscription_id in (${subscriptionIds.map(() => "?").join(", ")})`,
    [...subscriptionIds],
  );
  return new Set(rows.map((r) => r.subscription_id));
}

/**
 * Renewal charge rows written PENDING and already leased to their opener
 * (lease_until from database time, the generation LEASED_INSERT gives), in
 * one statement for the set: one row write each instead of an insert and a
 * lease update, and no entity to track. The rows go as one JSON parameter:
 * a values list of 20 placeholders a row took PostgreSQL 6 ms to plan for a
 * set of 200 (B8, pg_stat_statements with track_planning: 285 ms of planning
 * in 10,000 renewals, the most of any statement); the JSON's values pass
 * through the same input functions (numeric, timestamptz) as bound ones.
 */
export async function insertLeasedRenewalCharges(em: EntityManager, rows: readonly ChargeRow[]): Promise<void> {
  await executeBound(
    em,
    `insert into subscription_charges (id, subscription_id, merchant_id, wallet_user_id, period_index, period_start, period_end,
       amount, currency, asset, asset_amount, rate, status, attempt, created_at, purpose,
       subtotal, discount_amount, credit_applied, coupon_id, rate_at, ${LEASED_INSERT.columns})
     select id, subscription_id, merchant_id, wallet_user_id, period_index, period_start, period_end,
            amount, currency, asset, asset_amount, rate, ${PENDING}, attempt, created_at, 'RENEWAL',
            subtotal, discount_amount, credit_applied, coupon_id, rate_at, ${LEASED_INSERT.values}
       from jsonb_to_recordset(?::jsonb) as r(id uuid, subscription_id uuid, merchant_id uuid, wallet_user_id uuid, period_index int,
            period_start timestamptz, period_end timestamptz, amount numeric, currency text, asset text, asset_amount numeric,
            rate numeric, attempt int, created_at timestamptz, subtotal numeric, discount_amount numeric, credit_applied numeric,
            coupon_id uuid, rate_at timestamptz)`,
    [
      // The placeholders in the text's order: the lease's (in the select list), then the rows.
      LEASED_INSERT.param,
      JSON.stringify(
        rows.map((r) => ({
          id: r.id,
          subscription_id: r.subscriptionId,
          merchant_id: r.merchantId,
          wallet_user_id: r.walletUserId,
          period_index: r.periodIndex,
          period_start: r.periodStart,
          period_end: r.periodEnd,
          amount: r.amount,
          currency: r.currency,
          asset: r.asset,
          asset_amount: r.assetAmount,
          rate: r.rate,
          attempt: r.attempt,
          created_at: r.createdAt,
          subtotal: r.subtotal,
          discount_amount: r.discountAmount,
          credit_applied: r.creditApplied,
          coupon_id: r.couponId,
          rate_at: r.rateAt,
        })),
      ),
    ],
  );
}

/** Charges as plain rows, locked in id order (after their subscriptions: the lock order of every settle). */
export async function lockChargeRows(em: EntityManager, ids: readonly string[]): Promise<ChargeRow[]> {
  const rows = await em.execute<Record<string, unknown>[]>(
    `select ${selectColumns(em, SubscriptionCharge, "c")} from subscription_charges c where c.id = any(string_to_array(?, ',')::uuid[]) order by c.id for update`,
    [ids.join(",")],
  );
  return asEntityRows<ChargeRow>(em, SubscriptionCharge, rows);
}

/** The subscription a charge pays for (read unlocked: the caller locks that subscription before the charge). */
export async function subscriptionIdOfCharge(em: EntityManager, chargeId: string): Promise<string | undefined> {
  const [owner] = await em.execute<{ subscription_id: string }[]>("select subscription_id from subscription_charges where id = ?", [chargeId]);
  return owner?.subscription_id;
}

/** A merchant's charges settled in [from, to), counted per status (SUCCEEDED, FAILED): the dashboard's Overview. */
export function countSettledCharges(em: EntityManager, merchantId: string, from: Date, to: Date): Promise<{ status: string; n: string }[]> {
  return em.execute<{ status: string; n: string }[]>(
    `select status, count(*) as n from subscription_charges
      where merchant_id = ? and created_at >= ? and created_at < ? and ${statusIn("status", chargeMachine.terminal)} group by status`,
    [merchantId, from, to],
  );
}

/** A merchant's SUCCEEDED charges of [from, to), summed per UTC day and currency (the days with none are absent). */
export function dailyChargedVolume(
  em: EntityManager,
  merchantId: string,
  from: Date,
  to: Date,
): Promise<{ day: string; currency: string; total: string; n: string }[]> {
  return em.execute<{ day: string; currency: string; total: string; n: string }[]>(
    `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, currency, sum(amount)::text as total, count(*) as n
       from subscription_charges
      where merchant_id = ? and created_at >= ? and created_at < ? and status = ${SUCCEEDED} group by 1, 2`,
    [merchantId, from, to],
  );
}

/** One exported charge as the export statement reads it (amounts as text, exact). */
interface ExportedChargeRow {
  /** created_at to the microsecond, as the next batch's key (a Date keeps only milliseconds). */
  key_at: string;
  id: string;
  subscription_id: string;
  wallet_user_id: string;
  created_at: Date;
  settled_at: Date | null;
  status: string;
  failure_reason: string | null;
  purpose: string;
  currency: string;
  amount: string;
  asset: string;
  asset_amount: string | null;
  rate: string | null;
  amount_refunded: string;
  asset_amount_refunded: string;
  receipt_number: string | null;
}

/**
 * One batch of the merchant's charges created in [from, to), oldest first on
 * (created_at, id), after the previous batch's last key when `after` is given:
 * one range scan of subscription_charges_merchant_created_idx (migration 0031).
 */
export function chargesCreatedBetween(
  em: EntityManager,
  merchantId: string,
  from: Date,
  to: Date,
  after: { at: string; id: string } | undefined,
  limit: number,
): Promise<ExportedChargeRow[]> {
  const params: unknown[] = [merchantId, from, to];
  let afterKey = "";
  if (after) {
    afterKey = "and (created_at, id) > (?::timestamptz, ?)";
    params.push(after.at, after.id);
  }
  return em.execute<ExportedChargeRow[]>(
    `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as key_at, id, subscription_id, wallet_user_id, created_at, settled_at, status, failure_reason, purpose, currency,
            amount::text as amount, asset, asset_amount::text as asset_amount, rate::text as rate,
            amount_refunded::text as amount_refunded, asset_amount_refunded::text as asset_amount_refunded, receipt_number
       from subscription_charges
      where merchant_id = ? and created_at >= ? and created_at < ? ${afterKey}
      order by created_at, id
      limit ?`,
    [...params, limit],
  );
}

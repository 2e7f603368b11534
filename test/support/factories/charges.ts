import { randomUUID } from "node:crypto";
import type { Db } from "./db.ts";

/**
 * Which period a charge is for. Each purpose has its usual one; `{ index }`
 * is for tests that need several rows on one subscription.
 */
export type ChargePeriod =
  /** Period 1, the day from the subscription's next billing date (the test plans bill daily). */
  | "due"
  /** Period 0, a month from now. */
  | "first"
  /** Period 0, the subscription's current period. */
  | "current"
  /** That period index, the day from now. */
  | { index: number };

export interface ChargeTraits {
  subscriptionId: string;
  /** PENDING (in flight, the default), SUCCEEDED, or FAILED (INSUFFICIENT_FUNDS); the settled ones settled now. */
  status?: "PENDING" | "SUCCEEDED" | "FAILED";
  /** RENEWAL (the default, for the "due" period), FIRST_PAYMENT ("first"), PLAN_CHANGE ("current", needs changeSessionId). */
  purpose?: "RENEWAL" | "FIRST_PAYMENT" | "PLAN_CHANGE";
  period?: ChargePeriod;
  /** In USD, charged 1:1 in USDT_TRON. */
  amount?: string | number;
  changeSessionId?: string;
  /** The lease runs out this many seconds from now (negative: it already has); none by default. */
  leaseSeconds?: number;
  leaseGeneration?: number;
  /** Parked by the stale-charge sweep (now). */
  parked?: boolean;
  createdSecondsAgo?: number;
  /** Another customer than the subscription's (one the wallet does not know makes every wallet call fail). */
  walletUserId?: string;
  id?: string;
}

const DEFAULT_PERIOD = { RENEWAL: "due", FIRST_PAYMENT: "first", PLAN_CHANGE: "current" } as const;

/** Period index, start and end of each named period (SQL over the subscription `s`). */
const PERIODS = {
  due: [1, "s.next_billing_at", "s.next_billing_at + interval '1 day'"],
  first: [0, "now()", "now() + interval '1 month'"],
  current: [0, "s.current_period_start", "s.current_period_end"],
} as const;

/**
 * A subscription charge, as the billing engine would have left it, owned by the
 * subscription's merchant and customer. Times are the database's now(), as the
 * rows the services write.
 */
export async function charge(db: Db, traits: ChargeTraits): Promise<{ id: string; merchantId: string; walletUserId: string }> {
  const { subscriptionId, status = "PENDING", purpose = "RENEWAL", amount = 4 } = traits;
  const period = traits.period ?? DEFAULT_PERIOD[purpose];
  const [index, start, end] = typeof period === "string" ? PERIODS[period] : [period.index, "now()", "now() + interval '1 day'"];
  const [row] = await db.sql<{ id: string; merchant_id: string; wallet_user_id: string }>(
    `insert into subscription_charges (id, subscription_id, merchant_id, wallet_user_id, period_index, period_start, period_end,
       amount, currency, asset, asset_amount, rate, status, failure_reason, attempt, created_at, settled_at, parked_at,
       lease_until, lease_generation, change_session_id, purpose)
     select ?, s.id, s.merchant_id, coalesce(?::uuid, s.wallet_user_id), ?, ${start}, ${end},
       ?::numeric, 'USD', 'USDT_TRON', ?::numeric, 1, ?, ?, 1, now() - make_interval(secs => ?), ${status === "PENDING" ? "null" : "now()"}, ${traits.parked ? "now()" : "null"},
       now() + make_interval(secs => ?), ?, ?::uuid, ?
     from subscriptions s where s.id = ?
     returning id, merchant_id, wallet_user_id`,
    [
      traits.id ?? randomUUID(),
      traits.walletUserId ?? null,
      index,
      String(amount),
      String(amount),
      status,
      status === "FAILED" ? "INSUFFICIENT_FUNDS" : null,
      traits.createdSecondsAgo ?? 0,
      traits.leaseSeconds ?? null,
      traits.leaseGeneration ?? 0,
      traits.changeSessionId ?? null,
      purpose,
      subscriptionId,
    ],
  );
  if (!row) throw new Error(`no subscription ${subscriptionId} to charge`);
  return { id: row.id, merchantId: row.merchant_id, walletUserId: row.wallet_user_id };
}

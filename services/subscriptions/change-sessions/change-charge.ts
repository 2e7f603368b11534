import type { EntityManager } from "@mikro-orm/postgresql";
import type { ChargeRow, SubscriptionRow } from "../entities.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";
import { periodEnd } from "../billing-calendar.ts";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { insertChargeAttempt, settleCharge, type FailureReason } from "../first-payment.ts";
import type { SubscriptionPorts } from "../ports.ts";

export interface ChangeChargeTerms {
  amount: string;
  currency: string;
  asset: string;
  assetAmount: string;
  rate: string;
}

/**
 * Step 1 of the first-payment pattern (first-payment.ts) for a plan change's
 * immediate charge, inside the caller's transaction (subscription and session
 * locked): the next attempt row, PENDING with a lease, committed before the
 * wallet is called with the row's id as idempotency key; settleCharge then
 * does steps 2 and 3 exactly as for a first payment, and its success applies
 * the change (apply-paid-change.ts). The row is labelled with the period it
 * was paid in (the current one) but is not that period's charge: the
 * per-period uniqueness rules skip rows with a change_session_id (0007).
 * With `failureReason` the attempt is recorded as refused without calling the wallet.
 */
export async function openChangeCharge(
  em: EntityManager,
  now: Date,
  sub: SubscriptionRow,
  session: ChangeSessionRow,
  terms: ChangeChargeTerms,
  failureReason?: FailureReason,
): Promise<ChargeRow> {
  const [attempts, periods] = await Promise.all([
    em.execute<{ attempt: number | null }[]>("select max(attempt) as attempt from subscription_charges where change_session_id = ?", [session.id]),
    em.execute<{ period: number | null }[]>(
      "select max(period_index) as period from subscription_charges where subscription_id = ? and change_session_id is null and status = 'SUCCEEDED'",
      [sub.id],
    ),
  ]);
  const start = sub.currentPeriodStart ?? now;
  const end = sub.currentPeriodEnd && sub.currentPeriodEnd > start ? sub.currentPeriodEnd : periodEnd(start, session.requestedInterval, session.requestedIntervalCount, 1);
  return insertChargeAttempt(em, now, sub, {
    period: { index: Number(periods[0]?.period ?? 0), start, end },
    terms,
    attempt: Number(attempts[0]?.attempt ?? 0) + 1,
    failureReason,
    changeSessionId: session.id,
  });
}

/**
 * The sweep's part: immediate charges left PENDING by a crash (lease run
 * out) are finished with the same idempotency key, through settleCharge like
 * first payments; a success applies the change then.
 */
export async function settleStaleChangeCharges(ctx: UseCaseContext, ports: SubscriptionPorts): Promise<number> {
  const stale = await ctx.em.execute<{ id: string }[]>(
    `select id from subscription_charges
      where status = 'PENDING' and change_session_id is not null and (lease_until is null or lease_until < now())
      order by created_at limit 100`,
  );
  let settled = 0;
  for (const { id } of stale) {
    try {
      const res = await settleCharge({ em: ctx.em.fork(), clock: ctx.clock }, ports, id, false);
      if (res.state === "settled") settled += 1;
    } catch (err) {
      ports.logger.warn({ err, chargeId: id }, "could not settle a pending plan-change charge; the next sweep retries");
    }
  }
  return settled;
}

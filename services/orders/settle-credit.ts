import type { UseCaseContext } from "../platform/use-case.ts";
import { formatAmount } from "../platform/money.ts";
import { OrderCredit, PaymentOrder } from "./entities.ts";
import { orderCreditKey } from "./reconcile-order.ts";
import type { WalletPort } from "./wallet-port.ts";
import { BUMP_VERSION } from "../platform/record-version.ts";

/**
 * Carries one credit to the wallet (CreditMerchant, idempotent on the
 * credit's key) and marks it DONE. The row was committed before any call, so
 * a crash anywhere leaves a PENDING row the sweep retries with the same key
 * and amount: the merchant is credited exactly once. A failed call counts an
 * attempt and rethrows (the job fails; the sweep tries again later).
 */
export async function settleCredit(ctx: UseCaseContext, wallet: WalletPort, creditId: string): Promise<"credited" | "already_done" | "missing"> {
  const credit = await ctx.em.findOne(OrderCredit, { id: creditId });
  if (!credit) return "missing";
  if (credit.status === "DONE") return "already_done";
  const order = await ctx.em.findOne(PaymentOrder, { id: credit.orderId }, { fields: ["externalId"] });
  let transactionId: string;
  try {
    ({ transactionId } = await wallet.creditMerchant({
      idempotencyKey: credit.idempotencyKey,
      merchantId: credit.merchantId,
      asset: credit.asset,
      amount: formatAmount(credit.amount),
      description: `payment order ${order?.externalId ?? credit.orderId}`.slice(0, 500),
    }));
  } catch (err) {
    // Back-off per row (old values on the right): 5 s, 10 s, 20 s … one hour; parked after CREDIT_MAX_ATTEMPTS.
    await ctx.em.getConnection().execute(
      `update payment_order_credits
          set attempts = attempts + 1, last_error = ?,
              next_attempt_at = now() + make_interval(secs => least(3600, 5 * power(2, attempts))),
              parked_at = case when attempts + 1 >= ? then now() else null end
        where id = ? and status = 'PENDING'`,
      [String((err as Error).message ?? err).slice(0, 500), CREDIT_MAX_ATTEMPTS, creditId],
    );
    throw err;
  }
  const now = ctx.clock.now();
  await ctx.em.transactional(async (em) => {
    const conn = em.getConnection();
    await conn.execute(
      "update payment_order_credits set status = 'DONE', wallet_transaction_id = ?, credited_at = ?, attempts = attempts + 1, last_error = null where id = ? and status = 'PENDING'",
      [transactionId, now, creditId],
    );
    // The order's own credit settles it; credits of single transfers leave settled_at alone.
    if (credit.idempotencyKey === orderCreditKey(credit.orderId)) {
      await conn.execute(`update payment_orders set settled_at = ?, updated_at = ?, ${BUMP_VERSION} where id = ? and settled_at is null`, [now, now, credit.orderId]);
    }
  });
  return "credited";
}

export const CREDIT_SWEEP_BATCH = 100;
/** A credit whose wallet call failed this many times is parked: reported by reconciliation (PARKED_ROW), no longer retried. */
export const CREDIT_MAX_ATTEMPTS = 12;

/**
 * Every PENDING credit whose next try is due, never-failed ones first: the
 * recovery path for a crash between commit and the wallet call, a lost job,
 * or a wallet outage. Failing rows back off and are parked, so they never
 * block newer ones.
 */
export async function settlePendingCredits(ctx: UseCaseContext, wallet: WalletPort, limit = CREDIT_SWEEP_BATCH): Promise<{ credited: number; failed: number }> {
  const pending = await ctx.em.execute<{ id: string }[]>(
    `select id from payment_order_credits
      where status = 'PENDING' and parked_at is null and (next_attempt_at is null or next_attempt_at <= now())
      order by next_attempt_at nulls first, created_at limit ?`,
    [limit],
  );
  let credited = 0;
  let failed = 0;
  for (const { id } of pending) {
    try {
      if ((await settleCredit({ em: ctx.em.fork(), clock: ctx.clock }, wallet, id)) === "credited") credited++;
    } catch {
      failed++;
    }
  }
  return { credited, failed };
}

import type { UseCaseContext } from "../platform/use-case.ts";
import type { Logger } from "../platform/logger.ts";
import { createLogger } from "../platform/logger.ts";
import { formatAmount } from "../platform/money.ts";
import { runWalletCall, sweepWalletCalls, type WalletCall } from "../platform/wallet-calls/wallet-call.ts";
import { ledgerKeys } from "../wallet/contract.ts";
import { OrderCredit, PaymentOrder } from "./entities.ts";
import type { WalletPort } from "./wallet-port.ts";
import { creditStatus, lockCredit, markCreditDone, markOrderSettled } from "./order-store.ts";

/**
 * The order-credit kind of wallet call (platform/wallet-calls/): a credit row
 * was committed PENDING with the payment state that causes it (outbox);
 * CreditMerchant, idempotent on the credit's key, moves the money, and one
 * transaction marks the row DONE (and the order settled, for the order's own
 * credit). A crash anywhere leaves a PENDING row the sweep finishes with the
 * same key and amount: the merchant is credited exactly once.
 */
function creditCall(wallet: WalletPort, logger: Logger): WalletCall<{ transactionId: string }, void, "credited", LockedCredit> {
  return {
    table: "payment_order_credits",
    what: "credit",
    logger,
    async call(ctx, id) {
      const credit = await ctx.em.fork().findOneOrFail(OrderCredit, { id });
      const order = await ctx.em.fork().findOne(PaymentOrder, { id: credit.orderId }, { fields: ["externalId"] });
      return wallet.creditMerchant({
        idempotencyKey: credit.idempotencyKey,
        merchantId: credit.merchantId,
        asset: credit.asset,
        amount: formatAmount(credit.amount),
        description: `payment order ${order?.externalId ?? credit.orderId}`.slice(0, 500),
      });
    },
    async lockBefore() {},
    async lockRow(em, id) {
      const row = await lockCredit(em, id);
      return row ? { id, status: row.status, leaseGeneration: Number(row.lease_generation), orderId: row.order_id, idempotencyKey: row.idempotency_key } : null;
    },
    async record(tx, credit, { transactionId }) {
      const now = tx.clock.now();
      await markCreditDone(tx.em, credit.id, transactionId, now);
      // The order's own credit settles it; credits of single transfers leave settled_at alone.
      if (credit.idempotencyKey === ledgerKeys.orderCredit(credit.orderId)) {
        await markOrderSettled(tx.em, credit.orderId, now);
      }
      return "credited";
    },
    async settled() {
      return "credited";
    },
  };
}

/** What the settle locks of a credit row: its fence and what its record needs. */
interface LockedCredit {
  id: string;
  status: string;
  leaseGeneration: number;
  orderId: string;
  idempotencyKey: string;
}

const quiet = createLogger("silent");

/**
 * Carries one credit to the wallet (the job's path). "in_progress": another
 * caller holds it; a failure counts on the row and throws (the job retries,
 * the sweep too, with back-off).
 */
export async function settleCredit(
  ctx: UseCaseContext,
  wallet: WalletPort,
  creditId: string,
  logger: Logger = quiet,
): Promise<"credited" | "already_done" | "in_progress" | "missing"> {
  const status = await creditStatus(ctx.em, creditId);
  if (status === undefined) return "missing";
  if (status === "DONE") return "already_done";
  const res = await runWalletCall(ctx, creditCall(wallet, logger), creditId);
  return res.state === "settled" ? res.result : "in_progress";
}

/**
 * Every PENDING credit whose next try is due, never-failed ones first: the
 * recovery path for a crash between commit and the wallet call, a lost job,
 * or a wallet outage. Failing rows back off and are parked, so they never
 * block newer ones.
 */
export async function settlePendingCredits(ctx: UseCaseContext, wallet: WalletPort, logger: Logger = quiet): Promise<{ credited: number; failed: number }> {
  const { settled, failed } = await sweepWalletCalls(ctx, creditCall(wallet, logger));
  return { credited: settled, failed };
}

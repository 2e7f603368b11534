import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { UseCaseContext } from "../platform/use-case.ts";
import { compare, formatAmount, sub, zero } from "../platform/money.ts";
import { lockAccounts, openAccount, postTransactions } from "./ledger.ts";
import { findReplay, type MovementRequest } from "./ledger-replay.ts";

export interface MerchantDebitResult {
  outcome: "SUCCEEDED" | "MERCHANT_BALANCE_INSUFFICIENT";
  transactionId: string | undefined;
  /** The merchant's balance in this asset after the attempt (canonical form). */
  merchantBalanceAfter: string;
  /** True when this answer is the first outcome of an earlier call with the same key. */
  replayed: boolean;
}

/**
 * Money leaving a merchant's account (`request.merchantId`, `request.asset`)
 * for `openPayee`'s account, as one balanced transaction under the key: the
 * one lock-check-post every merchant debit shares (refunds, payouts, order
 * refunds). The merchant account's row lock is taken before its balance is
 * read, so all debits of one merchant and asset queue on that lock and can
 * never together overdraw it. A balance below the amount moves nothing and is
 * not final (a retry of the key evaluates again); a replay of the key answers
 * the first outcome, also when two calls race to post it.
 */
export async function debitMerchant(
  ctx: UseCaseContext,
  key: string,
  request: MovementRequest & { merchantId: string },
  description: string | null,
  openPayee: (em: EntityManager) => Promise<string>,
): Promise<MerchantDebitResult> {
  const replayed = (r: { transactionId: string; balanceAfter: string }) =>
    ({ outcome: "SUCCEEDED", transactionId: r.transactionId, merchantBalanceAfter: r.balanceAfter, replayed: true }) as const;
  const replay = await findReplay(ctx.em, key, request, "debit");
  if (replay) return replayed(replay);
  try {
    return await ctx.em.transactional(async (em) => {
      const payerId = await openAccount(em, ctx.clock, { type: "MERCHANT", id: request.merchantId }, request.asset);
      const payeeId = await openPayee(em);
      const accounts = await lockAccounts(em, [payerId, payeeId]);
      const raced = await findReplay(em, key, request, "debit");
      if (raced) return replayed(raced);
      const merchant = accounts.get(payerId)!;
      if (compare(merchant.balance, request.amount) < 0) {
        return {
          outcome: "MERCHANT_BALANCE_INSUFFICIENT",
          transactionId: undefined,
          merchantBalanceAfter: formatAmount(merchant.balance),
          replayed: false,
        } as const;
      }
      const [posted] = await postTransactions(em, ctx.clock, accounts, [
        {
          ...request,
          idempotencyKey: key,
          description,
          legs: [
            { accountId: payerId, amount: sub(zero(), request.amount) },
            { accountId: payeeId, amount: request.amount },
          ],
        },
      ]);
      return {
        outcome: "SUCCEEDED",
        transactionId: posted!.transactionId,
        merchantBalanceAfter: posted!.balancesAfter.get(payerId)!,
        replayed: false,
      } as const;
    });
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      const late = await findReplay(ctx.em.fork(), key, request, "debit");
      if (late) return replayed(late);
    }
    throw err;
  }
}

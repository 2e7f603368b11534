import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { compare, formatAmount, sub, zero } from "../platform/money.ts";
import { walletUserNotFound } from "./get-wallet-user.ts";
import { lockAccounts, openAccount, postTransactions } from "./ledger.ts";
import { findReplay, type MovementRequest } from "./ledger-replay.ts";
import { checkDescription, checkIdempotencyKey, parseAssetAmount, requireAsset, requireUuid } from "./wallet-input.ts";

export interface RefundInput {
  idempotencyKey: string;
  merchantId: string;
  walletUserId: string;
  asset: string;
  amount: string;
  description?: string | undefined;
}

export type RefundOutcome = "SUCCEEDED" | "MERCHANT_BALANCE_INSUFFICIENT";

export interface RefundResult {
  outcome: RefundOutcome;
  transactionId: string | undefined;
  /** The merchant's balance in this asset after the attempt (canonical form). */
  merchantBalanceAfter: string;
  /** True when this answer is the first outcome of an earlier call with the same key. */
  replayed: boolean;
}

/**
 * Moves `amount` from the merchant's account back to the wallet user's, as
 * one balanced transaction, both accounts locked first (the merchant account
 * is the hot one: every refund and charge of that merchant and asset queues
 * on it). The merchant is never overdrawn: a balance below the amount is the
 * outcome MERCHANT_BALANCE_INSUFFICIENT with nothing moved, and it is not
 * final (a retry with the same key evaluates again). Freezes are ignored on
 * purpose: money owed to a customer is never refused, and a frozen merchant
 * account is frozen against the merchant, not against its customers.
 */
export async function refund(ctx: UseCaseContext, input: RefundInput): Promise<RefundResult> {
  const key = checkIdempotencyKey(input.idempotencyKey, true)!;
  const merchantId = requireUuid("merchantId", input.merchantId);
  const walletUserId = requireUuid("walletUserId", input.walletUserId);
  const asset = requireAsset(input.asset);
  const value = parseAssetAmount("amount", input.amount, asset);
  const description = checkDescription(input.description);
  const request: MovementRequest = { kind: "REFUND", asset: asset.code, amount: value, walletUserId, merchantId };

  const replay = await findReplay(ctx.em, key, request, "debit");
  if (replay) return { outcome: "SUCCEEDED", transactionId: replay.transactionId, merchantBalanceAfter: replay.balanceAfter, replayed: true };
  try {
    return await ctx.em.transactional(async (em) => {
      const users = await em.execute<{ id: string }[]>("select id from wallet_users where id = ?", [walletUserId]);
      if (!users[0]) throw walletUserNotFound(walletUserId);
      const payerId = await openAccount(em, ctx.clock, { type: "MERCHANT", id: merchantId }, asset.code);
      const payeeId = await openAccount(em, ctx.clock, { type: "WALLET_USER", id: walletUserId }, asset.code);
      const accounts = await lockAccounts(em, [payerId, payeeId]);
      const raced = await findReplay(em, key, request, "debit");
      if (raced) return { outcome: "SUCCEEDED", transactionId: raced.transactionId, merchantBalanceAfter: raced.balanceAfter, replayed: true } as const;

      const merchant = accounts.get(payerId)!;
      if (compare(merchant.balance, value) < 0) {
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
            { accountId: payerId, amount: sub(zero(), value) },
            { accountId: payeeId, amount: value },
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
      if (late) return { outcome: "SUCCEEDED", transactionId: late.transactionId, merchantBalanceAfter: late.balanceAfter, replayed: true };
    }
    throw err;
  }
}

import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { compare, formatAmount, sub, zero } from "../platform/money.ts";
import { lockAccounts, openAccount, postTransactions } from "./ledger.ts";
import { findReplay, type MovementRequest } from "./ledger-replay.ts";
import { creditFromOutside } from "./credit-from-outside.ts";
import { isOrderRefundKey } from "./contract.ts";
import { checkDescription, checkIdempotencyKey, parseAssetAmount, requireAsset, requireUuid } from "./wallet-input.ts";

export interface PayoutFundsInput {
  idempotencyKey: string;
  merchantId: string;
  asset: string;
  /** The payout's amount + fee. */
  amount: string;
  description?: string | undefined;
}

export interface DebitForPayoutResult {
  outcome: "SUCCEEDED" | "MERCHANT_BALANCE_INSUFFICIENT";
  transactionId: string | undefined;
  merchantBalanceAfter: string;
  replayed: boolean;
}

/**
 * A payout's amount + fee leave the merchant's account for the asset's
 * PAYOUTS system account (money on its way out, or gone): one balanced
 * PAYOUT transaction. The balance is checked under the merchant account's
 * row lock, the lock every refund of that merchant and asset takes to check
 * the same balance (refund.ts), so payouts and refunds queue on one lock and
 * can never together overdraw it. An order refund's reservation (key
 * order-refund-<id>) is the same movement, posted as kind ORDER_REFUND. A balance too low moves nothing and is not
 * final (a retry of the key evaluates again). A frozen merchant account is
 * not checked here: freezes stop customers' charges, and the payouts service
 * decides who may pay out.
 */
export async function debitForPayout(ctx: UseCaseContext, input: PayoutFundsInput): Promise<DebitForPayoutResult> {
  const key = checkIdempotencyKey(input.idempotencyKey, true)!;
  const merchantId = requireUuid("merchantId", input.merchantId);
  const asset = requireAsset(input.asset);
  const value = parseAssetAmount("amount", input.amount, asset);
  const description = checkDescription(input.description);
  const request: MovementRequest = {
    kind: isOrderRefundKey(key) ? "ORDER_REFUND" : "PAYOUT",
    asset: asset.code,
    amount: value,
    walletUserId: null,
    merchantId,
  };

  const replayed = (r: { transactionId: string; balanceAfter: string }) =>
    ({ outcome: "SUCCEEDED", transactionId: r.transactionId, merchantBalanceAfter: r.balanceAfter, replayed: true }) as const;
  const replay = await findReplay(ctx.em, key, request, "debit");
  if (replay) return replayed(replay);
  try {
    return await ctx.em.transactional(async (em) => {
      const payerId = await openAccount(em, ctx.clock, { type: "MERCHANT", id: merchantId }, asset.code);
      const payoutsId = await openAccount(em, ctx.clock, { type: "SYSTEM", code: "PAYOUTS" }, asset.code);
      const accounts = await lockAccounts(em, [payerId, payoutsId]);
      const raced = await findReplay(em, key, request, "debit");
      if (raced) return replayed(raced);
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
            { accountId: payoutsId, amount: value },
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

/**
 * A failed or cancelled payout's amount + fee back from the PAYOUTS account
 * to the merchant's (PAYOUT_REVERSAL). Never refused: the money was the
 * merchant's. Idempotent on the key.
 */
export async function reversePayout(
  ctx: UseCaseContext,
  input: PayoutFundsInput,
): Promise<{ transactionId: string; merchantBalanceAfter: string; replayed: boolean }> {
  const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, true);
  const merchantId = requireUuid("merchantId", input.merchantId);
  const asset = requireAsset(input.asset);
  const amount = parseAssetAmount("amount", input.amount, asset);
  const res = await creditFromOutside(ctx, {
    request: {
      kind: idempotencyKey && isOrderRefundKey(idempotencyKey) ? "ORDER_REFUND" : "PAYOUT_REVERSAL",
      asset: asset.code,
      amount,
      walletUserId: null,
      merchantId,
    },
    owner: { type: "MERCHANT", id: merchantId },
    source: "PAYOUTS",
    asset,
    amount,
    idempotencyKey,
    description: checkDescription(input.description),
  });
  return { transactionId: res.transactionId, merchantBalanceAfter: res.balanceAfter, replayed: res.replayed };
}

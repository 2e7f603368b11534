import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { compare, formatAmount, sub, zero } from "../platform/money.ts";
import { ChargeAttempt, type ChargeOutcome } from "./entities.ts";
import { walletUserNotFound } from "./get-wallet-user.ts";
import { lockAccounts, openAccount, postTransaction } from "./ledger.ts";
import { findReplay, type MovementRequest } from "./ledger-replay.ts";
import { checkDescription, checkIdempotencyKey, parseAssetAmount, requireAsset, requireUuid } from "./wallet-input.ts";

export interface ChargeInput {
  idempotencyKey: string;
  walletUserId: string;
  merchantId: string;
  asset: string;
  amount: string;
  description?: string | undefined;
}

export interface ChargeResult {
  outcome: ChargeOutcome;
  transactionId: string | undefined;
  /** The wallet user's balance in this asset after the attempt (canonical form). */
  balanceAfter: string;
  /** True when this answer is the first outcome of an earlier call with the same key. */
  replayed: boolean;
}

/**
 * Moves `amount` from the wallet user's account to the merchant's, as one
 * balanced transaction. Refusals (frozen, insufficient funds) are outcomes,
 * recorded in wallet_charge_attempts for the audit trail but NOT final: a
 * retry with the same key evaluates again (the money may have arrived since).
 * A SUCCEEDED charge is final: a retry returns it and moves nothing.
 */
export async function charge(ctx: UseCaseContext, input: ChargeInput): Promise<ChargeResult> {
  const key = checkIdempotencyKey(input.idempotencyKey, true)!;
  const walletUserId = requireUuid("walletUserId", input.walletUserId);
  const merchantId = requireUuid("merchantId", input.merchantId);
  const asset = requireAsset(input.asset);
  const value = parseAssetAmount("amount", input.amount, asset);
  const description = checkDescription(input.description);
  const request: MovementRequest = { kind: "CHARGE", asset: asset.code, amount: value, walletUserId, merchantId };

  const replay = await findReplay(ctx.em, key, request, "debit");
  if (replay) return succeeded(replay.transactionId, replay.balanceAfter, true);
  try {
    return await ctx.em.transactional(async (em) => {
      // Share lock: a freeze (which updates the row) waits for charges in flight, and they for it.
      const users = await em.execute<{ status: string }[]>("select status from wallet_users where id = ? for share", [walletUserId]);
      if (!users[0]) throw walletUserNotFound(walletUserId);
      const payerId = await openAccount(em, ctx.clock, { type: "WALLET_USER", id: walletUserId }, asset.code);
      const payeeId = await openAccount(em, ctx.clock, { type: "MERCHANT", id: merchantId }, asset.code);
      const accounts = await lockAccounts(em, [payerId, payeeId]);
      // Same key in parallel: the loser of the lock race sees the winner's transaction here.
      const raced = await findReplay(em, key, request, "debit");
      if (raced) return succeeded(raced.transactionId, raced.balanceAfter, true);

      const payer = accounts.get(payerId)!;
      let outcome: ChargeOutcome;
      let transactionId: string | undefined;
      let balanceAfter = formatAmount(payer.balance);
      if (users[0].status === "FROZEN" || payer.frozen) outcome = "ACCOUNT_FROZEN";
      else if (compare(payer.balance, value) < 0) outcome = "INSUFFICIENT_FUNDS";
      else {
        const posted = await postTransaction(em, ctx.clock, {
          ...request,
          idempotencyKey: key,
          description,
          legs: [
            { accountId: payerId, amount: sub(zero(), value) },
            { accountId: payeeId, amount: value },
          ],
        });
        outcome = "SUCCEEDED";
        transactionId = posted.transactionId;
        balanceAfter = posted.balancesAfter.get(payerId)!;
      }
      em.create(ChargeAttempt, {
        id: randomUUID(),
        idempotencyKey: key,
        walletUserId,
        merchantId,
        asset: asset.code,
        amount: formatAmount(value),
        outcome,
        balanceAfter,
        transactionId: transactionId ?? null,
        createdAt: ctx.clock.now(),
      });
      return { outcome, transactionId, balanceAfter, replayed: false };
    });
  } catch (err) {
    // The key was taken by a movement on other accounts (so no lock ordered us): answer as a retry would.
    if (err instanceof UniqueConstraintViolationException) {
      const late = await findReplay(ctx.em.fork(), key, request, "debit");
      if (late) return succeeded(late.transactionId, late.balanceAfter, true);
    }
    throw err;
  }
}

const succeeded = (transactionId: string, balanceAfter: string, replayed: boolean): ChargeResult => ({
  outcome: "SUCCEEDED",
  transactionId,
  balanceAfter,
  replayed,
});

import type { UseCaseContext } from "../platform/use-case.ts";
import { walletUserNotFound } from "./get-wallet-user.ts";
import { openAccount } from "./ledger.ts";
import { debitMerchant } from "./debit-merchant.ts";
import type { MovementRequest } from "./ledger-replay.ts";
import { findWalletUserId } from "./wallet-user-store.ts";
import { checkDescription, checkIdempotencyKey, parseAssetAmount, requireAsset, requireUuid } from "./wallet-input.ts";

interface RefundInput {
  idempotencyKey: string;
  merchantId: string;
  walletUserId: string;
  asset: string;
  amount: string;
  description?: string | undefined;
}

type RefundOutcome = "SUCCEEDED" | "MERCHANT_BALANCE_INSUFFICIENT";

interface RefundResult {
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
  const request = { kind: "REFUND", asset: asset.code, amount: value, walletUserId, merchantId } satisfies MovementRequest;

  return debitMerchant(ctx, key, request, description, async (em) => {
    if (!(await findWalletUserId(em, walletUserId))) throw walletUserNotFound(walletUserId);
    return openAccount(em, ctx.clock, { type: "WALLET_USER", id: walletUserId }, asset.code);
  });
}

import type { UseCaseContext } from "../platform/use-case.ts";
import { openAccount } from "./ledger.ts";
import type { MovementRequest } from "./ledger-replay.ts";
import { debitMerchant, type MerchantDebitResult } from "./debit-merchant.ts";
import { creditFromOutside } from "./credit-from-outside.ts";
import { isOrderRefundKey } from "./contract.ts";
import { checkDescription, checkIdempotencyKey, parseAssetAmount, requireAsset, requireUuid } from "./wallet-input.ts";

interface PayoutFundsInput {
  idempotencyKey: string;
  merchantId: string;
  asset: string;
  /** The payout's amount + fee. */
  amount: string;
  description?: string | undefined;
}

type DebitForPayoutResult = MerchantDebitResult;

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
  const request = {
    kind: isOrderRefundKey(key) ? "ORDER_REFUND" : "PAYOUT",
    asset: asset.code,
    amount: value,
    walletUserId: null,
    merchantId,
  } satisfies MovementRequest;

  // Into the asset's PAYOUTS system account: money on its way out, or gone.
  return debitMerchant(ctx, key, request, description, (em) => openAccount(em, ctx.clock, { type: "SYSTEM", code: "PAYOUTS" }, asset.code));
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

import type { UseCaseContext } from "../platform/use-case.ts";
import { creditFromOutside, type CreditResult } from "./credit-from-outside.ts";
import { checkDescription, checkIdempotencyKey, parseAssetAmount, requireAsset, requireUuid } from "./wallet-input.ts";

interface CreditMerchantInput {
  idempotencyKey: string;
  merchantId: string;
  asset: string;
  amount: string;
  description?: string | undefined;
}

/**
 * Money a merchant received from outside (a paid payment order): the asset's
 * PAYMENT_RECEIPTS system account gives, the merchant's account receives.
 * The key is required: the caller retries until it hears back.
 */
export async function creditMerchant(ctx: UseCaseContext, input: CreditMerchantInput): Promise<CreditResult & { asset: string }> {
  const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, true);
  const merchantId = requireUuid("merchantId", input.merchantId);
  const asset = requireAsset(input.asset);
  const amount = parseAssetAmount("amount", input.amount, asset);
  const description = checkDescription(input.description);
  const result = await creditFromOutside(ctx, {
    request: { kind: "MERCHANT_CREDIT", asset: asset.code, amount, walletUserId: null, merchantId },
    owner: { type: "MERCHANT", id: merchantId },
    source: "PAYMENT_RECEIPTS",
    asset,
    amount,
    idempotencyKey,
    description,
  });
  return { ...result, asset: asset.code };
}

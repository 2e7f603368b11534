import type { UseCaseContext } from "../platform/use-case.ts";
import { walletUserNotFound } from "./get-wallet-user.ts";
import { creditFromOutside, type CreditResult } from "./credit-from-outside.ts";
import { checkIdempotencyKey, parseAssetAmount, requireAsset } from "./wallet-input.ts";
import { isUuid } from "../platform/ids.ts";
import { walletUserExists } from "./wallet-user-store.ts";

interface CreditWalletUserInput {
  walletUserId: string;
  asset: string;
  amount: string;
  idempotencyKey?: string | undefined;
}

/**
 * An operator (or sandbox) top-up: the asset's EXTERNAL_DEPOSITS system
 * account gives, the user's account receives. Without a key every call credits.
 */
export async function creditWalletUser(ctx: UseCaseContext, input: CreditWalletUserInput): Promise<CreditResult & { asset: string }> {
  if (!isUuid(input.walletUserId)) throw walletUserNotFound(input.walletUserId);
  const walletUserId = input.walletUserId.toLowerCase();
  const asset = requireAsset(input.asset);
  const amount = parseAssetAmount("amount", input.amount, asset);
  const idempotencyKey = checkIdempotencyKey(input.idempotencyKey ?? "", false);
  const result = await creditFromOutside(ctx, {
    request: { kind: "WALLET_CREDIT", asset: asset.code, amount, walletUserId, merchantId: null },
    owner: { type: "WALLET_USER", id: walletUserId },
    source: "EXTERNAL_DEPOSITS",
    asset,
    amount,
    idempotencyKey,
    description: null,
    async precheck(em) {
      if (!(await walletUserExists(em, walletUserId))) throw walletUserNotFound(walletUserId);
    },
  });
  return { ...result, asset: asset.code };
}

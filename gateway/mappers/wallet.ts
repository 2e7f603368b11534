import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Account, Asset, WalletUser } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";

/** The operator's view of a wallet user: never a hash, a password or a PIN. */
export function walletUserBody(user: WalletUser) {
  return {
    id: user.id,
    email: user.email,
    status: user.status,
    createdAt: user.createdAt ? timestampDate(user.createdAt).toISOString() : null,
    pinLocked: user.pinLocked,
    pinLockedUntil: user.pinLockedUntil ? timestampDate(user.pinLockedUntil).toISOString() : null,
  };
}

export const balanceBody = (account: Account) => ({ asset: account.asset, balance: account.balance, frozen: account.frozen });

export const assetBody = (asset: Asset) => ({
  code: asset.code,
  network: asset.network,
  decimals: asset.decimals,
  currency: asset.currency,
  name: asset.name,
  requiredConfirmations: asset.requiredConfirmations,
});

import { iso, isoOrNull } from "../platform/timestamps.ts";
import type { AssetInfo } from "./assets.ts";
import type { WalletUserRow } from "./entities.ts";
import type { AccountView } from "./list-accounts.ts";
import type { BalanceTransactionView } from "./list-balance-transactions.ts";

/**
 * What callers may see of a wallet user (the operator REST body and CLI
 * output): never the hashes or the failure counters. `now` is the service
 * clock: a lock that has run out is reported as unlocked.
 */
export function walletUserRecord(user: WalletUserRow, now: Date) {
  const locked = user.pinLockedUntil != null && user.pinLockedUntil.getTime() > now.getTime();
  return {
    id: user.id,
    email: user.email,
    status: user.status,
    createdAt: iso(user.createdAt),
    pinLocked: locked,
    pinLockedUntil: locked ? isoOrNull(user.pinLockedUntil) : null,
  };
}

/** A balance as operators see it (the account's id stays internal). */
export const balanceRecord = (account: AccountView) => ({ asset: account.asset, balance: account.balance, frozen: account.frozen });

/** A registry asset as operators see it. */
export const assetRecord = (asset: AssetInfo) => ({
  code: asset.code,
  network: asset.network,
  decimals: asset.decimals,
  currency: asset.currency,
  name: asset.name,
  requiredConfirmations: asset.requiredConfirmations,
  payoutFee: asset.payoutFee,
  payoutMinimum: asset.payoutMinimum,
});

/** One movement of a merchant's account as the merchant sees it (GET /api/v1/balance-transactions). */
export const balanceTransactionRecord = (t: BalanceTransactionView) => ({
  id: t.id,
  object: "balance_transaction" as const,
  type: t.type,
  asset: t.asset,
  amount: t.amount,
  balanceAfter: t.balanceAfter,
  sourceType: t.sourceType,
  sourceId: t.sourceId,
  createdAt: iso(t.createdAt),
});

import type { UseCaseContext } from "../platform/use-case.ts";
import { formatAmount } from "../platform/money.ts";
import { LedgerAccount } from "./entities.ts";
import { ASSETS } from "./assets.ts";
import { getWalletUser } from "./get-wallet-user.ts";
import { requireUuid } from "./wallet-input.ts";

export interface AccountView {
  /** Empty until the account is opened by its first movement (or freeze). */
  id: string;
  asset: string;
  balance: string;
  frozen: boolean;
}

export type AccountHolder = { type: "WALLET_USER" | "MERCHANT"; id: string };

/**
 * One entry per registry asset, in registry order, so a funding-asset picker
 * can show every asset; assets never moved show "0". The wallet does not know
 * merchants, so an unknown merchant simply has zero everywhere; an unknown
 * wallet user is a 404.
 */
export async function listAccounts(ctx: UseCaseContext, holder: AccountHolder): Promise<AccountView[]> {
  if (holder.type === "WALLET_USER") await getWalletUser(ctx, holder.id);
  const ownerId = requireUuid("ownerId", holder.id);
  const rows = await ctx.em.find(LedgerAccount, { ownerType: holder.type, ownerId });
  const byAsset = new Map(rows.map((r) => [r.asset, r]));
  return ASSETS.map((asset) => {
    const row = byAsset.get(asset.code);
    return row
      ? { id: row.id, asset: asset.code, balance: formatAmount(row.balance), frozen: row.frozen }
      : { id: "", asset: asset.code, balance: "0", frozen: false };
  });
}

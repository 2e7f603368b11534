import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { WalletUser, type WalletUserRow } from "./entities.ts";

export async function getWalletUser(ctx: UseCaseContext, id: string): Promise<WalletUserRow> {
  const user = isUuid(id) ? await ctx.em.findOne(WalletUser, { id }) : null;
  if (!user) throw walletUserNotFound(id);
  return user;
}

export const walletUserNotFound = (id: string) => notFound("WALLET_USER_NOT_FOUND", `wallet user ${id} not found`);

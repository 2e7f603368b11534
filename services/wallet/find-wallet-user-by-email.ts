import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { WalletUser, type WalletUserRow } from "./entities.ts";
import { walletEmail } from "./wallet-input.ts";

/** Case-insensitive: "Ann@Example.com" finds ann@example.com. */
export async function findWalletUserByEmail(ctx: UseCaseContext, email: string): Promise<WalletUserRow> {
  const normalized = walletEmail(email);
  const user = await ctx.em.findOne(WalletUser, { email: normalized });
  if (!user) throw notFound("WALLET_USER_NOT_FOUND", `no wallet user with email ${normalized}`);
  return user;
}

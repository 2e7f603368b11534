import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { readPrepared, selectColumns, statementFor } from "../platform/database/prepared.ts";
import { WalletUser, type WalletUserRow } from "./entities.ts";

/**
 * A named (prepared) statement, read outside any transaction: every
 * subscription create and approval checks the wallet user, so this read is
 * on a hot path.
 */
export async function getWalletUser(ctx: UseCaseContext, id: string): Promise<WalletUserRow> {
  const statement = statementFor(ctx.em, "wallet.get_wallet_user", () => `select ${selectColumns(ctx.em, WalletUser, "u")} from wallet_users u where u.id = $1`);
  const [user] = isUuid(id) ? await readPrepared<WalletUserRow>(ctx.em, statement, [id]) : [];
  if (!user) throw walletUserNotFound(id);
  return user;
}

export const walletUserNotFound = (id: string) => notFound("WALLET_USER_NOT_FOUND", `wallet user ${id} not found`);

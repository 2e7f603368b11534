import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { readBatched } from "../platform/database/batched-reads.ts";
import type { WalletUserRow } from "./entities.ts";
import { walletUsersById } from "./wallet-user-store.ts";

/**
 * Read outside any transaction: every subscription create and approval
 * checks the wallet user, so this read is on a hot path: the reads of one
 * event-loop turn share one prepared statement (readBatched).
 */
export async function getWalletUser(ctx: UseCaseContext, id: string): Promise<WalletUserRow> {
  const user = isUuid(id) ? await readBatched(ctx.em, walletUsersById, { id }) : undefined;
  if (!user) throw walletUserNotFound(id);
  return user;
}

export const walletUserNotFound = (id: string) => notFound("WALLET_USER_NOT_FOUND", `wallet user ${id} not found`);

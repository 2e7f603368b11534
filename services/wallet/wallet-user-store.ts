import type { EntityManager } from "@mikro-orm/postgresql";
import { selectColumns } from "../platform/database/prepared.ts";
import { readByIds } from "../platform/database/batched-reads.ts";
import { WalletUser, type WalletUserRow } from "./entities.ts";

/** The wallet users' statements; each runs on the caller's entity manager (in its transaction) unless it says otherwise. */

/** Wallet users by id, outside any transaction: the reads of one event-loop turn share one prepared statement (readBatched). */
export const walletUsersById = readByIds<WalletUserRow>(
  "wallet.get_wallet_user",
  (em) => `select ${selectColumns(em, WalletUser, "u")} from wallet_users u where u.id = any($1::uuid[])`,
);

/**
 * The users' statuses under share locks, in id order (a batch locks them in one
 * order): a freeze waits for the charges that hold them, and they for it.
 * Unknown ids are left out.
 */
export async function lockWalletUsersForCharge(em: EntityManager, ids: string[]): Promise<{ id: string; status: string }[]> {
  return em.execute(`select id, status from wallet_users where id in (${ids.map(() => "?").join(", ")}) order by id for share`, ids);
}

/** The user's id when the user exists (a refund's payee). */
export async function findWalletUserId(em: EntityManager, id: string): Promise<string | undefined> {
  const users = await em.execute<{ id: string }[]>("select id from wallet_users where id = ?", [id]);
  return users[0]?.id;
}

/** Whether the user exists (a top-up's receiver). */
export async function walletUserExists(em: EntityManager, id: string): Promise<boolean> {
  const rows = await em.execute("select 1 from wallet_users where id = ?", [id]);
  return rows.length > 0;
}

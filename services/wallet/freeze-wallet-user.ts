import { LockMode } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { isUuid } from "../platform/ids.ts";
import { WalletUser, type WalletUserRow } from "./entities.ts";
import { walletUserNotFound } from "./get-wallet-user.ts";
import { walletUserMachine, type WalletUserEvent } from "./wallet-user-status.ts";

/**
 * Freezing stops charges (they answer ACCOUNT_FROZEN) and nothing else:
 * credits still land and the user can still log in. The row lock orders the
 * move with charges in flight (they hold a share lock on the user).
 */
export function freezeWalletUser(ctx: UseCaseContext, id: string): Promise<WalletUserRow> {
  return moveWalletUser(ctx, id, "freeze");
}

export function unfreezeWalletUser(ctx: UseCaseContext, id: string): Promise<WalletUserRow> {
  return moveWalletUser(ctx, id, "unfreeze");
}

async function moveWalletUser(ctx: UseCaseContext, id: string, event: WalletUserEvent): Promise<WalletUserRow> {
  if (!isUuid(id)) throw walletUserNotFound(id);
  return ctx.em.transactional(async (em) => {
    const user = await em.findOne(WalletUser, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!user) throw walletUserNotFound(id);
    user.status = walletUserMachine.next(user.status, event);
    user.updatedAt = ctx.clock.now();
    return user;
  });
}

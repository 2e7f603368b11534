import type { UseCaseContext } from "../platform/use-case.ts";
import { formatAmount } from "../platform/money.ts";
import { getWalletUser } from "./get-wallet-user.ts";
import { lockAccounts, openAccount } from "./ledger.ts";
import { markAccountFrozen } from "./ledger-store.ts";
import type { AccountHolder, AccountView } from "./list-accounts.ts";
import { requireAsset, requireUuid } from "./wallet-input.ts";
import { noteAuditObject } from "../platform/audit/call-context.ts";

/**
 * Freezes or unfreezes one account (owner + asset), opening it when needed so
 * an operator can freeze before the first deposit. A frozen account still
 * receives; a charge from it answers ACCOUNT_FROZEN. A flag, not a status
 * machine: setting it twice is harmless.
 */
export async function setAccountFrozen(ctx: UseCaseContext, input: { holder: AccountHolder; asset: string; frozen: boolean }): Promise<AccountView> {
  if (input.holder.type === "WALLET_USER") await getWalletUser(ctx, input.holder.id);
  const ownerId = requireUuid("ownerId", input.holder.id);
  const asset = requireAsset(input.asset);
  return ctx.em.transactional(async (em) => {
    const id = await openAccount(em, ctx.clock, { type: input.holder.type, id: ownerId }, asset.code);
    const locked = (await lockAccounts(em, [id])).get(id)!;
    noteAuditObject("LedgerAccount", { id, merchantId: input.holder.type === "MERCHANT" ? ownerId : undefined });
    await markAccountFrozen(em, id, input.frozen, ctx.clock.now());
    return { id, asset: asset.code, balance: formatAmount(locked.balance), frozen: input.frozen };
  });
}

import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { UseCaseContext } from "../platform/use-case.ts";
import { sub, zero, type Amount } from "../platform/money.ts";
import type { AssetInfo } from "./assets.ts";
import { lockAccounts, openAccount, postTransactions, type AccountOwner, type SystemAccountCode } from "./ledger.ts";
import { findReplay, type MovementRequest } from "./ledger-replay.ts";
import { isAccountFrozen } from "./ledger-store.ts";

interface CreditInput {
  request: MovementRequest;
  owner: AccountOwner;
  source: SystemAccountCode;
  asset: AssetInfo;
  amount: Amount;
  idempotencyKey: string | undefined;
  description: string | null;
  /** Runs first inside the transaction (e.g. the owner must exist). */
  precheck?: (em: EntityManager) => Promise<void>;
}

export interface CreditResult {
  transactionId: string;
  accountId: string;
  balanceAfter: string;
  frozen: boolean;
  replayed: boolean;
}

/**
 * Money entering from outside: the system account of `source` gives, the
 * owner's account receives (frozen or not: a freeze stops money leaving).
 * Idempotent on the key when one is given.
 */
export async function creditFromOutside(ctx: UseCaseContext, input: CreditInput): Promise<CreditResult> {
  const replayOf = async (em: EntityManager): Promise<CreditResult | undefined> => {
    const replay = await findReplay(em, input.idempotencyKey, input.request, "credit");
    if (!replay) return undefined;
    const frozen = await isAccountFrozen(em, replay.accountId);
    return {
      transactionId: replay.transactionId,
      accountId: replay.accountId,
      balanceAfter: replay.balanceAfter,
      frozen,
      replayed: true,
    };
  };
  const early = await replayOf(ctx.em);
  if (early) return early;
  try {
    return await ctx.em.transactional(async (em) => {
      await input.precheck?.(em);
      const accountId = await openAccount(em, ctx.clock, input.owner, input.asset.code);
      const sourceId = await openAccount(em, ctx.clock, { type: "SYSTEM", code: input.source }, input.asset.code);
      const accounts = await lockAccounts(em, [accountId, sourceId]);
      const raced = await replayOf(em);
      if (raced) return raced;
      const [posted] = await postTransactions(em, ctx.clock, accounts, [
        {
          ...input.request,
          idempotencyKey: input.idempotencyKey ?? null,
          description: input.description,
          legs: [
            { accountId: sourceId, amount: sub(zero(), input.amount) },
            { accountId, amount: input.amount },
          ],
        },
      ]);
      return {
        transactionId: posted!.transactionId,
        accountId,
        balanceAfter: posted!.balancesAfter.get(accountId)!,
        frozen: accounts.get(accountId)!.frozen,
        replayed: false,
      };
    });
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      const late = await replayOf(ctx.em.fork());
      if (late) return late;
    }
    throw err;
  }
}

import type { EntityManager } from "@mikro-orm/postgresql";
import { conflict } from "../platform/errors.ts";
import { equals, formatAmount, type Amount } from "../platform/money.ts";
import type { TransactionKind } from "./entities.ts";

/** What a movement asks for; a retry under the same idempotency key must ask for exactly this again. */
export interface MovementRequest {
  kind: TransactionKind;
  asset: string;
  amount: Amount;
  walletUserId: string | null;
  merchantId: string | null;
}

export interface Replay {
  transactionId: string;
  /** The account the caller cares about (the payer of a charge, the credited account of a credit). */
  accountId: string;
  /** Its balance right after the first execution. */
  balanceAfter: string;
}

/**
 * The first outcome of the movement recorded under `key`, or undefined when
 * there is none. Keys share one namespace across Charge, CreditWalletUser and
 * CreditMerchant: a key already used for a different movement is a 409.
 */
export async function findReplay(
  em: EntityManager,
  key: string | undefined,
  request: MovementRequest,
  side: "debit" | "credit",
): Promise<Replay | undefined> {
  if (!key) return undefined;
  const rows = await em.execute<{ id: string; kind: string; asset: string; amount: string; wallet_user_id: string | null; merchant_id: string | null }[]>(
    "select id, kind, asset, amount::text as amount, wallet_user_id, merchant_id from ledger_transactions where idempotency_key = ?",
    [key],
  );
  const first = rows[0];
  if (!first) return undefined;
  const same =
    first.kind === request.kind &&
    first.asset === request.asset &&
    equals(first.amount, request.amount) &&
    first.wallet_user_id === request.walletUserId &&
    first.merchant_id === request.merchantId;
  if (!same) {
    throw conflict("IDEMPOTENCY_KEY_REUSED", "idempotencyKey: was already used for a different ledger movement");
  }
  const entries = await em.execute<{ account_id: string; balance_after: string }[]>(
    `select account_id, balance_after::text as balance_after from ledger_entries where transaction_id = ? and amount ${side === "debit" ? "<" : ">"} 0`,
    [first.id],
  );
  const entry = entries[0]!;
  return { transactionId: first.id, accountId: entry.account_id, balanceAfter: formatAmount(entry.balance_after) };
}

import type { EntityManager } from "@mikro-orm/postgresql";
import { conflict } from "../platform/errors.ts";
import { equals, formatAmount, type Amount } from "../platform/money.ts";
import type { TransactionKind } from "./entities.ts";
import { movementsByKeys } from "./ledger-store.ts";

/** What a movement asks for; a retry under the same idempotency key must ask for exactly this again. */
export interface MovementRequest {
  kind: TransactionKind;
  asset: string;
  amount: Amount;
  walletUserId: string | null;
  merchantId: string | null;
}

interface Replay {
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
export async function findReplay(em: EntityManager, key: string | undefined, request: MovementRequest, side: "debit" | "credit"): Promise<Replay | undefined> {
  if (!key) return undefined;
  return (await findReplays(em, [{ key, request }], side, () => "")).get(key);
}

/**
 * findReplay for many keys in one statement (a batch of charges), by key.
 * `field(i)` names the i-th key in a 409 (`charges[3].`).
 */
export async function findReplays(
  em: EntityManager,
  wanted: { key: string; request: MovementRequest }[],
  side: "debit" | "credit",
  field: (i: number) => string,
): Promise<Map<string, Replay>> {
  const replays = new Map<string, Replay>();
  if (wanted.length === 0) return replays;
  const rows = await movementsByKeys(
    em,
    wanted.map((w) => w.key),
    side,
  );
  const index = new Map(wanted.map((w, i) => [w.key, i]));
  for (const row of rows) {
    const i = index.get(row.idempotency_key)!;
    const request = wanted[i]!.request;
    const same =
      row.kind === request.kind &&
      row.asset === request.asset &&
      equals(row.amount, request.amount) &&
      row.wallet_user_id === request.walletUserId &&
      row.merchant_id === request.merchantId;
    if (!same) throw conflict("IDEMPOTENCY_KEY_REUSED", `${field(i)}idempotencyKey: was already used for a different ledger movement`);
    replays.set(row.idempotency_key, { transactionId: row.id, accountId: row.account_id, balanceAfter: formatAmount(row.balance_after) });
  }
  return replays;
}

import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../platform/clock.ts";
import { add, amount, formatAmount, isZero, zero, type Amount } from "../platform/money.ts";
import type { OwnerType, TransactionKind } from "./entities.ts";

/**
 * The double-entry ledger's write side. Rules every movement follows:
 * - a transaction is one row plus one entry per account leg; the legs sum to
 *   zero (one asset per transaction), and rows are never updated (a trigger refuses it);
 * - every account a transaction touches is locked first, all of them in one
 *   statement in id order, so two movements never wait on each other in a cycle;
 * - the cached balance moves in the same database transaction as the entries;
 *   a CHECK keeps users' and merchants' balances at zero or above.
 */

/** Money from outside enters (and would leave) through these per-asset accounts; they may go negative. */
export type SystemAccountCode = "EXTERNAL_DEPOSITS" | "PAYMENT_RECEIPTS";

export type AccountOwner = { type: Exclude<OwnerType, "SYSTEM">; id: string } | { type: "SYSTEM"; code: SystemAccountCode };

export interface LockedAccount {
  id: string;
  ownerType: OwnerType;
  asset: string;
  balance: Amount;
  frozen: boolean;
}

async function findAccountId(em: EntityManager, owner: AccountOwner, asset: string): Promise<string | undefined> {
  const rows =
    owner.type === "SYSTEM"
      ? await em.execute<{ id: string }[]>("select id from ledger_accounts where system_code = ? and asset = ?", [owner.code, asset])
      : await em.execute<{ id: string }[]>("select id from ledger_accounts where owner_type = ? and owner_id = ? and asset = ?", [owner.type, owner.id, asset]);
  return rows[0]?.id;
}

/** Returns the account's id, opening it first when needed; concurrent openers meet in the unique index. */
export async function openAccount(em: EntityManager, clock: Clock, owner: AccountOwner, asset: string): Promise<string> {
  const existing = await findAccountId(em, owner, asset);
  if (existing) return existing;
  const now = clock.now();
  await em.execute(
    `insert into ledger_accounts (id, owner_type, owner_id, system_code, asset, balance, frozen, created_at, updated_at)
     values (?, ?, ?, ?, ?, 0, false, ?, ?) on conflict do nothing`,
    [randomUUID(), owner.type, owner.type === "SYSTEM" ? null : owner.id, owner.type === "SYSTEM" ? owner.code : null, asset, now, now],
  );
  const id = await findAccountId(em, owner, asset);
  if (!id) throw new Error(`account for ${owner.type} ${asset} could not be opened`);
  return id;
}

/** Locks the accounts (FOR UPDATE, in id order) and returns their current state. Call inside a transaction. */
export async function lockAccounts(em: EntityManager, ids: string[]): Promise<Map<string, LockedAccount>> {
  const unique = [...new Set(ids)];
  const rows = await em.execute<{ id: string; owner_type: OwnerType; asset: string; balance: string; frozen: boolean }[]>(
    `select id, owner_type, asset, balance::text as balance, frozen from ledger_accounts
     where id in (${unique.map(() => "?").join(", ")}) order by id for update`,
    unique,
  );
  return new Map(
    rows.map((r) => [r.id, { id: r.id, ownerType: r.owner_type, asset: r.asset, balance: amount(r.balance), frozen: r.frozen }]),
  );
}

export interface Leg {
  accountId: string;
  /** Signed: negative leaves the account, positive enters it. */
  amount: Amount;
}

export interface PostingInput {
  kind: TransactionKind;
  asset: string;
  /** The amount moved (the sum of the positive legs). */
  amount: Amount;
  idempotencyKey: string | null;
  walletUserId: string | null;
  merchantId: string | null;
  description: string | null;
  legs: Leg[];
}

export interface Posted {
  transactionId: string;
  /** Canonical balance of each touched account right after this transaction. */
  balancesAfter: Map<string, string>;
}

/**
 * Writes one balanced transaction. The accounts must already be locked by
 * lockAccounts in this database transaction (the caller checked funds under that lock).
 */
export async function postTransaction(em: EntityManager, clock: Clock, input: PostingInput): Promise<Posted> {
  const sum = input.legs.reduce((acc, leg) => add(acc, leg.amount), zero());
  if (!isZero(sum) || input.legs.length < 2) throw new Error("ledger transaction legs must be at least two and sum to zero");
  const now = clock.now();
  const transactionId = randomUUID();
  await em.execute(
    `insert into ledger_transactions (id, idempotency_key, kind, asset, amount, wallet_user_id, merchant_id, description, created_at)
     values (?, ?, ?, ?, ?::numeric, ?, ?, ?, ?)`,
    [transactionId, input.idempotencyKey, input.kind, input.asset, formatAmount(input.amount), input.walletUserId, input.merchantId, input.description, now],
  );
  const balancesAfter = new Map<string, string>();
  const legs = [...input.legs].sort((a, b) => (a.accountId < b.accountId ? -1 : 1));
  for (const leg of legs) {
    const rows = await em.execute<{ balance: string }[]>(
      "update ledger_accounts set balance = balance + ?::numeric, updated_at = ? where id = ? returning balance::text as balance",
      [formatAmount(leg.amount), now, leg.accountId],
    );
    balancesAfter.set(leg.accountId, formatAmount(rows[0]!.balance));
  }
  await em.execute(
    `insert into ledger_entries (id, transaction_id, account_id, asset, amount, balance_after, created_at) values ${legs.map(() => "(?, ?, ?, ?, ?::numeric, ?::numeric, ?)").join(", ")}`,
    legs.flatMap((leg) => [randomUUID(), transactionId, leg.accountId, input.asset, formatAmount(leg.amount), balancesAfter.get(leg.accountId), now]),
  );
  return { transactionId, balancesAfter };
}

import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../platform/clock.ts";
import { add, amount, equals, formatAmount, isNegative, isZero, sub, zero, type Amount } from "../platform/money.ts";
import type { OwnerType, TransactionKind } from "./entities.ts";
import {
  createAccount,
  createOwnerAccounts,
  creditAccountsWithEntries,
  lockAccountRows,
  moveBalances,
  ownerAccountId,
  ownerAccountIds,
  systemAccountId,
  writeEntries,
  writeTransactions,
} from "./ledger-store.ts";

/**
 * The double-entry ledger's write side. Rules every movement follows:
 * - a transaction is one row plus one entry per account leg; the legs sum to
 *   zero (one asset per transaction), and rows are never updated (a trigger refuses it);
 * - every account a transaction touches is locked first, all of them in one
 *   statement in one global order (wallet users' accounts, then system
 *   accounts, then merchants', each by id), so two movements never wait on
 *   each other in a cycle; a batch may lock a merchant's account last, on its
 *   own (postTransactions), which keeps to that order;
 * - the cached balance moves in the same database transaction as the entries;
 *   a CHECK keeps users' and merchants' balances at zero or above.
 */

/** Money from outside enters (and would leave) through these per-asset accounts; they may go negative. */
export type SystemAccountCode = "EXTERNAL_DEPOSITS" | "PAYMENT_RECEIPTS" | "PAYOUTS";

export type AccountOwner = { type: Exclude<OwnerType, "SYSTEM">; id: string } | { type: "SYSTEM"; code: SystemAccountCode };

interface LockedAccount {
  id: string;
  ownerType: OwnerType;
  asset: string;
  balance: Amount;
  frozen: boolean;
}

function findAccountId(em: EntityManager, owner: AccountOwner, asset: string): Promise<string | undefined> {
  return owner.type === "SYSTEM" ? systemAccountId(em, owner.code, asset) : ownerAccountId(em, owner.type, owner.id, asset);
}

/** Returns the account's id, opening it first when needed; concurrent openers meet in the unique index. */
export async function openAccount(em: EntityManager, clock: Clock, owner: AccountOwner, asset: string): Promise<string> {
  const existing = await findAccountId(em, owner, asset);
  if (existing) return existing;
  await createAccount(
    em,
    { ownerType: owner.type, ownerId: owner.type === "SYSTEM" ? null : owner.id, systemCode: owner.type === "SYSTEM" ? owner.code : null, asset },
    clock.now(),
  );
  const id = await findAccountId(em, owner, asset);
  if (!id) throw new Error(`account for ${owner.type} ${asset} could not be opened`);
  return id;
}

/** Locks the accounts (FOR UPDATE, in the global lock order) and returns their current state. Call inside a transaction. */
export async function lockAccounts(em: EntityManager, ids: string[]): Promise<Map<string, LockedAccount>> {
  const unique = [...new Set(ids)];
  const rows = await lockAccountRows(em, unique);
  return new Map(rows.map((r) => [r.id, { id: r.id, ownerType: r.owner_type, asset: r.asset, balance: amount(r.balance), frozen: r.frozen }]));
}

interface Leg {
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

interface Posted {
  transactionId: string;
  /** Canonical balance of each touched account right after this transaction. */
  balancesAfter: Map<string, string>;
}

/**
 * openAccount for many owners at once (one asset each): two statements
 * whatever the count, plus one insert when some are new. Returns the ids
 * keyed by `ownerKey(owner, asset)`.
 */
export async function openAccounts(
  em: EntityManager,
  clock: Clock,
  wanted: { owner: { type: Exclude<OwnerType, "SYSTEM">; id: string }; asset: string }[],
): Promise<Map<string, string>> {
  const unique = new Map(wanted.map((w) => [ownerKey(w.owner, w.asset), w]));
  const find = async () => {
    const rows = await ownerAccountIds(em, [...unique.values()].map(owned));
    return new Map(rows.map((r) => [`${r.owner_type}/${r.owner_id}/${r.asset}`, r.id]));
  };
  if (unique.size === 0) return new Map();
  let found = await find();
  const missing = [...unique.entries()].filter(([key]) => !found.has(key)).map(([, w]) => w);
  if (missing.length > 0) {
    await createOwnerAccounts(em, missing.map(owned), clock.now());
    found = await find();
  }
  for (const key of unique.keys()) if (!found.has(key)) throw new Error(`account ${key} could not be opened`);
  return found;
}

export const ownerKey = (owner: { type: string; id: string }, asset: string) => `${owner.type}/${owner.id}/${asset}`;

const owned = (w: { owner: { type: string; id: string }; asset: string }) => ({ ownerType: w.owner.type, ownerId: w.owner.id, asset: w.asset });

/**
 * Writes balanced transactions (one, or a batch of charges) in a few
 * statements: a transaction row each and an entry per leg, in the given
 * order, each entry's balance_after the running balance of its account.
 *
 * Accounts in `lockedAccounts` were locked by lockAccounts in this database
 * transaction (the caller decided on their balances under that lock): their
 * cached balances move once each by the sum of their legs, checked against
 * the running balances. Accounts in `creditedLast` (a merchant's, which every
 * charge of the batch credits) are not locked beforehand: they only receive,
 * so no decision depends on their balance, and one last statement locks,
 * moves and writes the entries of each, just before the commit. Their row is
 * then held for one statement and the commit instead of the whole batch: this
 * is what keeps a merchant's account from serialising its charges. Merchants'
 * accounts come last in the global lock order, so taking them last is safe.
 */
export async function postTransactions(
  em: EntityManager,
  clock: Clock,
  lockedAccounts: Map<string, LockedAccount>,
  inputs: (PostingInput & { transactionId?: string })[],
  creditedLast: ReadonlySet<string> = new Set(),
  /** Writes rows that reference these transactions (a batch's charge attempts) before the last statement. */
  beforeCreditingLast?: () => Promise<void>,
): Promise<Posted[]> {
  if (inputs.length === 0) {
    await beforeCreditingLast?.();
    return [];
  }
  const now = clock.now();
  const running = new Map<string, Amount>();
  const balanceOf = (accountId: string) => {
    const known = running.get(accountId) ?? lockedAccounts.get(accountId)?.balance;
    if (known === undefined) throw new Error(`account ${accountId} was not locked before posting`);
    return known;
  };
  const transactions: unknown[][] = [];
  const entries: unknown[][] = [];
  const lastEntries: unknown[][] = [];
  const lastTotals = new Map<string, Amount>();
  const posted: Posted[] = [];
  for (const input of inputs) {
    const sum = input.legs.reduce((acc, leg) => add(acc, leg.amount), zero());
    if (!isZero(sum) || input.legs.length < 2) throw new Error("ledger transaction legs must be at least two and sum to zero");
    const transactionId = input.transactionId ?? randomUUID();
    transactions.push([
      transactionId,
      input.idempotencyKey,
      input.kind,
      input.asset,
      formatAmount(input.amount),
      input.walletUserId,
      input.merchantId,
      input.description,
      now,
    ]);
    const balancesAfter = new Map<string, string>();
    for (const leg of [...input.legs].sort((a, b) => (a.accountId < b.accountId ? -1 : 1))) {
      if (creditedLast.has(leg.accountId)) {
        if (isNegative(leg.amount)) throw new Error(`account ${leg.accountId} is credited last but this leg takes from it`);
        lastTotals.set(leg.accountId, add(lastTotals.get(leg.accountId) ?? zero(), leg.amount));
        lastEntries.push([randomUUID(), transactionId, leg.accountId, input.asset, formatAmount(leg.amount), lastEntries.length]);
        continue;
      }
      const after = add(balanceOf(leg.accountId), leg.amount);
      running.set(leg.accountId, after);
      balancesAfter.set(leg.accountId, formatAmount(after));
      entries.push([randomUUID(), transactionId, leg.accountId, input.asset, formatAmount(leg.amount), formatAmount(after), now]);
    }
    posted.push({ transactionId, balancesAfter });
  }
  await writeTransactions(em, transactions);
  await writeEntries(em, entries);
  if (running.size > 0) {
    // One update per locked account, in id order.
    const moved = [...running.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    const updated = await moveBalances(
      em,
      now,
      moved.map(([id, after]) => [id, formatAmount(sub(after, lockedAccounts.get(id)!.balance))]),
    );
    if (updated.length !== moved.length) throw new Error("ledger batch: an account to update was not found");
    for (const row of updated) {
      if (!equals(row.balance, running.get(row.id)!))
        throw new Error(`account ${row.id} balance ${row.balance} differs from the running balance ${formatAmount(running.get(row.id)!)}`);
    }
    for (const [id, after] of running) lockedAccounts.get(id)!.balance = after;
  }
  await beforeCreditingLast?.();
  if (lastEntries.length > 0) await creditLast(em, now, lastTotals, lastEntries);
  return posted;
}

/**
 * The last statement of a batch: locks and credits each account by its
 * total, and writes its entries with the running balance from the balance it
 * had (computed by the database, exactly, in the batch's order).
 */
async function creditLast(em: EntityManager, now: Date, totals: Map<string, Amount>, rows: unknown[][]): Promise<void> {
  const accounts = [...totals.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  const written = await creditAccountsWithEntries(
    em,
    now,
    accounts.map(([id, total]) => [id, formatAmount(total)]),
    rows,
  );
  if (written !== rows.length) throw new Error(`ledger batch: ${written} of ${rows.length} credited-last entries written`);
}

import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../platform/clock.ts";
import { add, amount, equals, formatAmount, isNegative, isZero, sub, zero, type Amount } from "../platform/money.ts";
import type { OwnerType, TransactionKind } from "./entities.ts";

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

/** The global lock order: see the rules at the top. Merchants' accounts come last, so a batch can take them last. */
const LOCK_ORDER = "case owner_type when 'WALLET_USER' then 0 when 'SYSTEM' then 1 else 2 end, id";

/** Locks the accounts (FOR UPDATE, in the global lock order) and returns their current state. Call inside a transaction. */
export async function lockAccounts(em: EntityManager, ids: string[]): Promise<Map<string, LockedAccount>> {
  const unique = [...new Set(ids)];
  const rows = await em.execute<{ id: string; owner_type: OwnerType; asset: string; balance: string; frozen: boolean }[]>(
    `select id, owner_type, asset, balance::text as balance, frozen from ledger_accounts
     where id in (${unique.map(() => "?").join(", ")}) order by ${LOCK_ORDER} for update`,
    unique,
  );
  return new Map(rows.map((r) => [r.id, { id: r.id, ownerType: r.owner_type, asset: r.asset, balance: amount(r.balance), frozen: r.frozen }]));
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
    const list = [...unique.values()];
    const rows = await em.execute<{ id: string; owner_type: string; owner_id: string; asset: string }[]>(
      `select id, owner_type, owner_id, asset from ledger_accounts
        where (owner_type, owner_id, asset) in (${list.map(() => "(?, ?::uuid, ?)").join(", ")})`,
      list.flatMap((w) => [w.owner.type, w.owner.id, w.asset]),
    );
    return new Map(rows.map((r) => [`${r.owner_type}/${r.owner_id}/${r.asset}`, r.id]));
  };
  if (unique.size === 0) return new Map();
  let found = await find();
  const missing = [...unique.entries()].filter(([key]) => !found.has(key)).map(([, w]) => w);
  if (missing.length > 0) {
    const now = clock.now();
    await em.execute(
      `insert into ledger_accounts (id, owner_type, owner_id, system_code, asset, balance, frozen, created_at, updated_at)
       values ${missing.map(() => "(?, ?, ?, null, ?, 0, false, ?, ?)").join(", ")} on conflict do nothing`,
      missing.flatMap((w) => [randomUUID(), w.owner.type, w.owner.id, w.asset, now, now]),
    );
    found = await find();
  }
  for (const key of unique.keys()) if (!found.has(key)) throw new Error(`account ${key} could not be opened`);
  return found;
}

export const ownerKey = (owner: { type: string; id: string }, asset: string) => `${owner.type}/${owner.id}/${asset}`;

/** Rows per multi-row insert: well under PostgreSQL's 65,535 parameters. */
const INSERT_CHUNK = 500;

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
  for (let i = 0; i < transactions.length; i += INSERT_CHUNK) {
    const chunk = transactions.slice(i, i + INSERT_CHUNK);
    await em.execute(
      `insert into ledger_transactions (id, idempotency_key, kind, asset, amount, wallet_user_id, merchant_id, description, created_at)
       values ${chunk.map(() => "(?, ?, ?, ?, ?::numeric, ?, ?, ?, ?)").join(", ")}`,
      chunk.flat(),
    );
  }
  for (let i = 0; i < entries.length; i += INSERT_CHUNK) {
    const chunk = entries.slice(i, i + INSERT_CHUNK);
    await em.execute(
      `insert into ledger_entries (id, transaction_id, account_id, asset, amount, balance_after, created_at)
       values ${chunk.map(() => "(?, ?, ?, ?, ?::numeric, ?::numeric, ?)").join(", ")}`,
      chunk.flat(),
    );
  }
  if (running.size > 0) {
    // One update per locked account, in id order.
    const moved = [...running.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    const updated = await em.execute<{ id: string; balance: string }[]>(
      `update ledger_accounts a set balance = a.balance + v.delta, updated_at = ?
         from (values ${moved.map(() => "(?::uuid, ?::numeric)").join(", ")}) as v(id, delta)
        where a.id = v.id returning a.id, a.balance::text as balance`,
      [now, ...moved.flatMap(([id, after]) => [id, formatAmount(sub(after, lockedAccounts.get(id)!.balance))])],
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
  const written = await em.execute<{ n: string }[]>(
    `with moved as (
       update ledger_accounts a set balance = a.balance + v.total, updated_at = ?
         from (values ${accounts.map(() => "(?::uuid, ?::numeric)").join(", ")}) as v(id, total)
        where a.id = v.id
       returning a.id, a.balance - v.total as before
     ), written as (
       insert into ledger_entries (id, transaction_id, account_id, asset, amount, balance_after, created_at)
       select e.id, e.transaction_id, e.account_id, e.asset, e.amount,
              m.before + sum(e.amount) over (partition by e.account_id order by e.ord), ?
         from (values ${rows.map(() => "(?::uuid, ?::uuid, ?::uuid, ?, ?::numeric, ?::int)").join(", ")})
              as e(id, transaction_id, account_id, asset, amount, ord)
         join moved m on m.id = e.account_id
       returning 1
     )
     select count(*) as n from written`,
    [now, ...accounts.flatMap(([id, total]) => [id, formatAmount(total)]), now, ...rows.flat()],
  );
  if (Number(written[0]!.n) !== rows.length) throw new Error(`ledger batch: ${written[0]!.n} of ${rows.length} credited-last entries written`);
}

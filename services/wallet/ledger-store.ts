import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { OwnerType } from "./entities.ts";
import { executeBound } from "../platform/database/bound-values.ts";

/**
 * The ledger's statements: accounts, transactions and their entries
 * (ledger.ts holds the rules they follow: lock order, balanced legs). Every
 * function runs on the caller's entity manager, so inside its transaction.
 */

export async function systemAccountId(em: EntityManager, code: string, asset: string): Promise<string | undefined> {
  const rows = await em.execute<{ id: string }[]>("select id from ledger_accounts where system_code = ? and asset = ?", [code, asset]);
  return rows[0]?.id;
}

export async function ownerAccountId(em: EntityManager, ownerType: string, ownerId: string, asset: string): Promise<string | undefined> {
  const rows = await em.execute<{ id: string }[]>("select id from ledger_accounts where owner_type = ? and owner_id = ? and asset = ?", [
    ownerType,
    ownerId,
    asset,
  ]);
  return rows[0]?.id;
}

/** An account at zero; `on conflict do nothing`: concurrent openers meet in the unique index, and the caller reads the winner's id. */
export async function createAccount(
  em: EntityManager,
  account: { ownerType: OwnerType; ownerId: string | null; systemCode: string | null; asset: string },
  now: Date,
): Promise<void> {
  await em.execute(
    `insert into ledger_accounts (id, owner_type, owner_id, system_code, asset, balance, frozen, created_at, updated_at)
     values (?, ?, ?, ?, ?, 0, false, ?, ?) on conflict do nothing`,
    [randomUUID(), account.ownerType, account.ownerId, account.systemCode, account.asset, now, now],
  );
}

/** The global lock order (ledger.ts). Merchants' accounts come last, so a batch can take them last. */
const LOCK_ORDER = "case owner_type when 'WALLET_USER' then 0 when 'SYSTEM' then 1 else 2 end, id";

/** The accounts locked FOR UPDATE in one statement, in the global lock order, with their current state. */
export async function lockAccountRows(
  em: EntityManager,
  ids: string[],
): Promise<{ id: string; owner_type: OwnerType; asset: string; balance: string; frozen: boolean }[]> {
  return em.execute(
    `select id, owner_type, asset, balance::text as balance, frozen from ledger_accounts
     where id in (${ids.map(() => "?").join(", ")}) order by ${LOCK_ORDER} for update`,
    ids,
  );
}

interface OwnedAccount {
  ownerType: string;
  ownerId: string;
  asset: string;
}

/** The ids of the owners' accounts that exist, in one statement. */
export async function ownerAccountIds(
  em: EntityManager,
  wanted: OwnedAccount[],
): Promise<{ id: string; owner_type: string; owner_id: string; asset: string }[]> {
  return executeBound(
    em,
    `select id, owner_type, owner_id, asset from ledger_accounts
        where (owner_type, owner_id, asset) in (${wanted.map(() => "(?, ?::uuid, ?)").join(", ")})`,
    wanted.flatMap((w) => [w.ownerType, w.ownerId, w.asset]),
  );
}

/** createAccount for many owners in one statement (the same conflict rule). */
export async function createOwnerAccounts(em: EntityManager, missing: OwnedAccount[], now: Date): Promise<void> {
  await executeBound(
    em,
    `insert into ledger_accounts (id, owner_type, owner_id, system_code, asset, balance, frozen, created_at, updated_at)
       values ${missing.map(() => "(?, ?, ?, null, ?, 0, false, ?, ?)").join(", ")} on conflict do nothing`,
    missing.flatMap((w) => [randomUUID(), w.ownerType, w.ownerId, w.asset, now, now]),
  );
}

/** Rows per multi-row insert: well under PostgreSQL's 65,535 parameters. */
const INSERT_CHUNK = 500;

/** Transaction rows, in order: [id, idempotency_key, kind, asset, amount, wallet_user_id, merchant_id, description, created_at] each. */
export async function writeTransactions(em: EntityManager, rows: unknown[][]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    await executeBound(
      em,
      `insert into ledger_transactions (id, idempotency_key, kind, asset, amount, wallet_user_id, merchant_id, description, created_at)
       values ${chunk.map(() => "(?, ?, ?, ?, ?::numeric, ?, ?, ?, ?)").join(", ")}`,
      chunk.flat(),
    );
  }
}

/** Entry rows, in order: [id, transaction_id, account_id, asset, amount, balance_after, created_at] each. */
export async function writeEntries(em: EntityManager, rows: unknown[][]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    await executeBound(
      em,
      `insert into ledger_entries (id, transaction_id, account_id, asset, amount, balance_after, created_at)
       values ${chunk.map(() => "(?, ?, ?, ?, ?::numeric, ?::numeric, ?)").join(", ")}`,
      chunk.flat(),
    );
  }
}

/** Moves each locked account's cached balance by its delta (canonical decimal strings), one statement; answers the balances after. */
export async function moveBalances(em: EntityManager, now: Date, deltas: [id: string, delta: string][]): Promise<{ id: string; balance: string }[]> {
  return executeBound(
    em,
    `update ledger_accounts a set balance = a.balance + v.delta, updated_at = ?
         from (values ${deltas.map(() => "(?::uuid, ?::numeric)").join(", ")}) as v(id, delta)
        where a.id = v.id returning a.id, a.balance::text as balance`,
    [now, ...deltas.flat()],
  );
}

/**
 * The last statement of a batch: locks and credits each account by its total
 * (canonical decimal strings), and writes its entries (rows of [id,
 * transaction_id, account_id, asset, amount, ord]) with the running balance
 * from the balance it had, computed by the database, exactly, in the batch's
 * order. Answers how many entries were written.
 */
export async function creditAccountsWithEntries(em: EntityManager, now: Date, totals: [id: string, total: string][], rows: unknown[][]): Promise<number> {
  const written = await executeBound<{ n: string }>(
    em,
    `with moved as (
       update ledger_accounts a set balance = a.balance + v.total, updated_at = ?
         from (values ${totals.map(() => "(?::uuid, ?::numeric)").join(", ")}) as v(id, total)
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
    [now, ...totals.flat(), now, ...rows.flat()],
  );
  return Number(written[0]!.n);
}

export async function isAccountFrozen(em: EntityManager, id: string): Promise<boolean> {
  const [row] = await em.execute<{ frozen: boolean }[]>("select frozen from ledger_accounts where id = ?", [id]);
  return Boolean(row?.frozen);
}

/** A flag on a locked account (set-account-frozen.ts). */
export async function markAccountFrozen(em: EntityManager, id: string, frozen: boolean, now: Date): Promise<void> {
  await em.execute("update ledger_accounts set frozen = ?, updated_at = ? where id = ?", [frozen, now, id]);
}

interface RecordedMovement {
  id: string;
  idempotency_key: string;
  kind: string;
  asset: string;
  amount: string;
  wallet_user_id: string | null;
  merchant_id: string | null;
  account_id: string;
  balance_after: string;
}

/** The transactions recorded under these keys, each with its debited (or credited) leg, in one statement. */
export async function movementsByKeys(em: EntityManager, keys: string[], side: "debit" | "credit"): Promise<RecordedMovement[]> {
  return em.execute(
    `select t.id, t.idempotency_key, t.kind, t.asset, t.amount::text as amount, t.wallet_user_id, t.merchant_id, e.account_id, e.balance_after::text as balance_after
       from ledger_transactions t join ledger_entries e on e.transaction_id = t.id and e.amount ${side === "debit" ? "<" : ">"} 0
      where t.idempotency_key in (${keys.map(() => "?").join(", ")})`,
    keys,
  );
}

/*
 * The ledger check's rules (check-ledger.ts), each the first `limit` offenders
 * by id, read in the check's repeatable-read snapshot.
 */

const firstOffenders = <T>(em: EntityManager, sql: string, limit: number) => em.execute<T[]>(`${sql} limit ${limit}`);

/** Fewer than two legs, more than one asset, legs not summing to zero, or credits not equal to the amount. */
export const unbalancedTransactions = (em: EntityManager, limit: number) =>
  firstOffenders<{ id: string; legs: string; assets: string; total: string; credited: string; amount: string }>(
    em,
    `select t.id, count(e.id) as legs, count(distinct e.asset) as assets, coalesce(sum(e.amount), 0)::text as total,
                coalesce(sum(e.amount) filter (where e.amount > 0), 0)::text as credited, t.amount::text as amount
         from ledger_transactions t left join ledger_entries e on e.transaction_id = t.id
         group by t.id, t.amount
         having count(e.id) < 2 or count(distinct e.asset) <> 1 or coalesce(sum(e.amount), 0) <> 0
             or coalesce(sum(e.amount) filter (where e.amount > 0), 0) <> t.amount
         order by t.id`,
    limit,
  );

export const entriesInAnotherAsset = (em: EntityManager, limit: number) =>
  firstOffenders<{ id: string; entry_asset: string; account_asset: string; transaction_asset: string }>(
    em,
    `select e.id, e.asset as entry_asset, a.asset as account_asset, t.asset as transaction_asset
         from ledger_entries e join ledger_accounts a on a.id = e.account_id join ledger_transactions t on t.id = e.transaction_id
         where e.asset <> a.asset or e.asset <> t.asset order by e.id`,
    limit,
  );

/** Cached balances that differ from the sum of their account's entries. */
export const accountsOffTheirEntries = (em: EntityManager, limit: number) =>
  firstOffenders<{ id: string; balance: string; total: string }>(
    em,
    `select a.id, a.balance::text as balance, coalesce(s.total, 0)::text as total
         from ledger_accounts a left join (select account_id, sum(amount) as total from ledger_entries group by account_id) s on s.account_id = a.id
         where a.balance <> coalesce(s.total, 0) order by a.id`,
    limit,
  );

export const negativeOwnerAccounts = (em: EntityManager, limit: number) =>
  firstOffenders<{ id: string; owner_type: string; balance: string }>(
    em,
    `select id, owner_type, balance::text as balance from ledger_accounts where owner_type <> 'SYSTEM' and balance < 0 order by id`,
    limit,
  );

export const assetsNotSummingToZero = (em: EntityManager, limit: number) =>
  firstOffenders<{ asset: string; total: string }>(
    em,
    `select asset, sum(balance)::text as total from ledger_accounts group by asset having sum(balance) <> 0 order by asset`,
    limit,
  );

/** Refunds: the named merchant's account gives, the named wallet user's account receives, nothing else. */
export const misdirectedRefunds = (em: EntityManager, limit: number) =>
  firstOffenders<{ id: string }>(
    em,
    `select t.id from ledger_transactions t join ledger_entries e on e.transaction_id = t.id join ledger_accounts a on a.id = e.account_id
         where t.kind = 'REFUND'
         group by t.id, t.merchant_id, t.wallet_user_id
         having count(*) <> 2
             or count(*) filter (where e.amount < 0 and a.owner_type = 'MERCHANT' and a.owner_id = t.merchant_id) <> 1
             or count(*) filter (where e.amount > 0 and a.owner_type = 'WALLET_USER' and a.owner_id = t.wallet_user_id) <> 1
         order by t.id`,
    limit,
  );

/** Payouts and order refunds (reserved, or given back): the named merchant's account and the asset's PAYOUTS system account, one each way. */
export const misdirectedPayouts = (em: EntityManager, limit: number) =>
  firstOffenders<{ id: string }>(
    em,
    `select t.id from ledger_transactions t join ledger_entries e on e.transaction_id = t.id join ledger_accounts a on a.id = e.account_id
         where t.kind in ('PAYOUT', 'PAYOUT_REVERSAL', 'ORDER_REFUND')
         group by t.id, t.kind, t.merchant_id
         having count(*) <> 2
             or count(*) filter (where a.owner_type = 'MERCHANT' and a.owner_id = t.merchant_id
                                  and (t.kind = 'ORDER_REFUND' or (e.amount < 0) = (t.kind = 'PAYOUT'))) <> 1
             or count(*) filter (where a.owner_type = 'SYSTEM' and a.system_code = 'PAYOUTS') <> 1
         order by t.id`,
    limit,
  );

export async function ledgerSize(em: EntityManager): Promise<{ transactions: number; accounts: number }> {
  const [counts] = await em.execute<{ transactions: string; accounts: string }[]>(
    "select (select count(*) from ledger_transactions) as transactions, (select count(*) from ledger_accounts) as accounts",
  );
  return { transactions: Number(counts!.transactions), accounts: Number(counts!.accounts) };
}

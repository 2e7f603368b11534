import type { UseCaseContext } from "../platform/use-case.ts";
import { formatAmount } from "../platform/money.ts";

export interface LedgerCheck {
  ok: boolean;
  transactionsChecked: number;
  accountsChecked: number;
  problems: string[];
}

/** Each rule reports at most this many offenders, so a broken ledger still gives a readable answer. */
const PER_RULE = 50;

/**
 * Audits the whole ledger from one consistent snapshot (repeatable read,
 * read-only): every transaction has at least two legs, one asset, and sums to
 * zero; the positive legs add up to the transaction's amount; each cached
 * balance equals the sum of its account's entries; no user or merchant
 * balance is negative; each asset's balances sum to zero overall; and each
 * refund moves money from its merchant's account to its wallet user's only.
 */
export async function checkLedger(ctx: UseCaseContext): Promise<LedgerCheck> {
  return ctx.em.transactional(
    async (em) => {
      const problems: string[] = [];
      const rule = async <T>(sql: string, describe: (row: T) => string) => {
        const rows = await em.execute<T[]>(`${sql} limit ${PER_RULE}`);
        problems.push(...rows.map(describe));
      };
      await rule<{ id: string; legs: string; assets: string; total: string; credited: string; amount: string }>(
        `select t.id, count(e.id) as legs, count(distinct e.asset) as assets, coalesce(sum(e.amount), 0)::text as total,
                coalesce(sum(e.amount) filter (where e.amount > 0), 0)::text as credited, t.amount::text as amount
         from ledger_transactions t left join ledger_entries e on e.transaction_id = t.id
         group by t.id, t.amount
         having count(e.id) < 2 or count(distinct e.asset) <> 1 or coalesce(sum(e.amount), 0) <> 0
             or coalesce(sum(e.amount) filter (where e.amount > 0), 0) <> t.amount
         order by t.id`,
        (r) =>
          `transaction ${r.id} does not balance: ${r.legs} legs in ${r.assets} asset(s), legs sum to ${formatAmount(r.total)}, ` +
          `credits ${formatAmount(r.credited)} for an amount of ${formatAmount(r.amount)}`,
      );
      await rule<{ id: string; entry_asset: string; account_asset: string; transaction_asset: string }>(
        `select e.id, e.asset as entry_asset, a.asset as account_asset, t.asset as transaction_asset
         from ledger_entries e join ledger_accounts a on a.id = e.account_id join ledger_transactions t on t.id = e.transaction_id
         where e.asset <> a.asset or e.asset <> t.asset order by e.id`,
        (r) => `entry ${r.id} is in ${r.entry_asset} but its account holds ${r.account_asset} and its transaction moves ${r.transaction_asset}`,
      );
      await rule<{ id: string; balance: string; total: string }>(
        `select a.id, a.balance::text as balance, coalesce(s.total, 0)::text as total
         from ledger_accounts a left join (select account_id, sum(amount) as total from ledger_entries group by account_id) s on s.account_id = a.id
         where a.balance <> coalesce(s.total, 0) order by a.id`,
        (r) => `account ${r.id} caches balance ${formatAmount(r.balance)} but its entries sum to ${formatAmount(r.total)}`,
      );
      await rule<{ id: string; owner_type: string; balance: string }>(
        `select id, owner_type, balance::text as balance from ledger_accounts where owner_type <> 'SYSTEM' and balance < 0 order by id`,
        (r) => `${r.owner_type} account ${r.id} is negative: ${formatAmount(r.balance)}`,
      );
      await rule<{ asset: string; total: string }>(
        `select asset, sum(balance)::text as total from ledger_accounts group by asset having sum(balance) <> 0 order by asset`,
        (r) => `balances in ${r.asset} sum to ${formatAmount(r.total)} instead of 0`,
      );
      // Refunds: the named merchant's account gives, the named wallet user's account receives, nothing else.
      await rule<{ id: string }>(
        `select t.id from ledger_transactions t join ledger_entries e on e.transaction_id = t.id join ledger_accounts a on a.id = e.account_id
         where t.kind = 'REFUND'
         group by t.id, t.merchant_id, t.wallet_user_id
         having count(*) <> 2
             or count(*) filter (where e.amount < 0 and a.owner_type = 'MERCHANT' and a.owner_id = t.merchant_id) <> 1
             or count(*) filter (where e.amount > 0 and a.owner_type = 'WALLET_USER' and a.owner_id = t.wallet_user_id) <> 1
         order by t.id`,
        (r) => `refund transaction ${r.id} does not move money from its merchant's account to its wallet user's account`,
      );
      // Payouts and order refunds (reserved, or given back): the named merchant's account and the asset's PAYOUTS system account, one each way.
      await rule<{ id: string }>(
        `select t.id from ledger_transactions t join ledger_entries e on e.transaction_id = t.id join ledger_accounts a on a.id = e.account_id
         where t.kind in ('PAYOUT', 'PAYOUT_REVERSAL', 'ORDER_REFUND')
         group by t.id, t.kind, t.merchant_id
         having count(*) <> 2
             or count(*) filter (where a.owner_type = 'MERCHANT' and a.owner_id = t.merchant_id
                                  and (t.kind = 'ORDER_REFUND' or (e.amount < 0) = (t.kind = 'PAYOUT'))) <> 1
             or count(*) filter (where a.owner_type = 'SYSTEM' and a.system_code = 'PAYOUTS') <> 1
         order by t.id`,
        (r) => `payout transaction ${r.id} does not move money between its merchant's account and the PAYOUTS account`,
      );
      const [counts] = await em.execute<{ transactions: string; accounts: string }[]>(
        "select (select count(*) from ledger_transactions) as transactions, (select count(*) from ledger_accounts) as accounts",
      );
      return {
        ok: problems.length === 0,
        transactionsChecked: Number(counts!.transactions),
        accountsChecked: Number(counts!.accounts),
        problems,
      };
    },
    { isolationLevel: "repeatable read", readOnly: true },
  );
}

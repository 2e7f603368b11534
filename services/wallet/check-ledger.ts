import type { UseCaseContext } from "../platform/use-case.ts";
import { formatAmount } from "../platform/money.ts";
import {
  accountsOffTheirEntries,
  assetsNotSummingToZero,
  entriesInAnotherAsset,
  ledgerSize,
  misdirectedPayouts,
  misdirectedRefunds,
  negativeOwnerAccounts,
  unbalancedTransactions,
} from "./ledger-store.ts";

interface LedgerCheck {
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
      for (const r of await unbalancedTransactions(em, PER_RULE)) {
        problems.push(
          `transaction ${r.id} does not balance: ${r.legs} legs in ${r.assets} asset(s), legs sum to ${formatAmount(r.total)}, ` +
            `credits ${formatAmount(r.credited)} for an amount of ${formatAmount(r.amount)}`,
        );
      }
      for (const r of await entriesInAnotherAsset(em, PER_RULE)) {
        problems.push(`entry ${r.id} is in ${r.entry_asset} but its account holds ${r.account_asset} and its transaction moves ${r.transaction_asset}`);
      }
      for (const r of await accountsOffTheirEntries(em, PER_RULE)) {
        problems.push(`account ${r.id} caches balance ${formatAmount(r.balance)} but its entries sum to ${formatAmount(r.total)}`);
      }
      for (const r of await negativeOwnerAccounts(em, PER_RULE)) problems.push(`${r.owner_type} account ${r.id} is negative: ${formatAmount(r.balance)}`);
      for (const r of await assetsNotSummingToZero(em, PER_RULE)) problems.push(`balances in ${r.asset} sum to ${formatAmount(r.total)} instead of 0`);
      for (const r of await misdirectedRefunds(em, PER_RULE)) {
        problems.push(`refund transaction ${r.id} does not move money from its merchant's account to its wallet user's account`);
      }
      for (const r of await misdirectedPayouts(em, PER_RULE)) {
        problems.push(`payout transaction ${r.id} does not move money between its merchant's account and the PAYOUTS account`);
      }
      const counts = await ledgerSize(em);
      return {
        ok: problems.length === 0,
        transactionsChecked: counts.transactions,
        accountsChecked: counts.accounts,
        problems,
      };
    },
    { isolationLevel: "repeatable read", readOnly: true },
  );
}

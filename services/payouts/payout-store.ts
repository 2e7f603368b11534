import type { EntityManager } from "@mikro-orm/postgresql";
import { oldestOf } from "../platform/observability/due-work.ts";
import { sqlStatus } from "../platform/status-machine.ts";
import { WALLET_CALL_PENDING } from "../platform/wallet-calls/wallet-call-status.ts";
import { payoutMachine } from "./payout-status.ts";

/**
 * The payouts' statements (payouts and their wallet calls, payout_calls),
 * each on the caller's entity manager. Rows the ORM reads and writes stay
 * with the ORM in the use cases; what is here is what it cannot say as well.
 */

/** The payout calls' table (platform/wallet-calls/). */
export const PAYOUT_CALLS_TABLE = "payout_calls";

// The statuses these statements name, checked against the machine when the module loads.
const PAID = sqlStatus(payoutMachine.statuses, "PAID");
const PROCESSING = sqlStatus(payoutMachine.statuses, "PROCESSING");

/** The payout a call belongs to (read before the payout's lock: the lock order is the payout, then its call). */
export async function payoutIdOfCall(em: EntityManager, callId: string): Promise<string | undefined> {
  const [owner] = await em.execute<{ payout_id: string }[]>("select payout_id from payout_calls where id = ?", [callId]);
  return owner?.payout_id;
}

/** The id of the payout's DEBIT call (opened with the payout, so there is one). */
export async function debitCallIdOf(em: EntityManager, payoutId: string): Promise<string | undefined> {
  const [call] = await em.execute<{ id: string }[]>("select id from payout_calls where payout_id = ? and kind = 'DEBIT'", [payoutId]);
  return call?.id;
}

/**
 * Per asset, amount + fee of the merchant's payouts debited and neither
 * PAID nor reversed (decimal strings, summed by the database).
 */
export async function moneyInFlightByAsset(em: EntityManager, merchantId: string): Promise<{ asset: string; amount: string }[]> {
  return em.execute<{ asset: string; amount: string }[]>(
    `select asset, sum(amount + fee)::text as amount from payouts
      where merchant_id = ? and debited_at is not null and reversed_at is null and status <> ${PAID}
      group by asset`,
    [merchantId],
  );
}

/** Due since its lease or back-off ran out, whichever is later; a row never tried since it was opened (sweepWalletCalls' condition). */
export const oldestDuePayoutCall = (em: EntityManager, now: Date) =>
  oldestOf(
    em,
    `select min(coalesce(greatest(lease_until, next_settle_at), created_at)) as oldest from ${PAYOUT_CALLS_TABLE}
          where status = '${WALLET_CALL_PENDING}' and parked_at is null and (lease_until is null or lease_until < ?) and (next_settle_at is null or next_settle_at <= ?)`,
    [now, now],
  );

/** observeChain's condition: PROCESSING payouts whose next chain check is due. */
export const oldestDueChainCheck = (em: EntityManager, now: Date) =>
  oldestOf(em, `select min(next_chain_check_at) as oldest from payouts where status = ${PROCESSING} and next_chain_check_at <= ?`, [now]);

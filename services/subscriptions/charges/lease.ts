import type { EntityManager } from "@mikro-orm/postgresql";
import { DomainError } from "../../platform/errors.ts";

/**
 * The charge protocol: how a subscription charge (a first payment, a renewal
 * or retry, a trial's first charge, a plan change's immediate charge) moves
 * money exactly once, whatever crashes or stalls where.
 *
 *  1. Open: a PENDING `subscription_charges` row is committed first, inside
 *     the caller's transaction that holds the subscription lock, with a lease
 *     (open-charge.ts). The unique indexes allow one attempt in flight and one
 *     success per period (or per change session).
 *  2. Charge: the wallet is asked to move the money with the row's id as the
 *     idempotency key (`subscription-charge-<id>`); a retry of a key that
 *     succeeded answers the first success and moves nothing (settle-charge.ts).
 *  3. Settle: one transaction (subscription lock, then the charge row) marks
 *     the row SUCCEEDED or FAILED and hands the outcome to what the charge pays
 *     for (activation, renewal, plan change), with its event (outbox).
 *
 * Lease rules:
 *  - Only the lease holder calls the wallet for a row. A lease is database
 *    time (`lease_until`, CHARGE_LEASE_SECONDS) and outlasts the wallet call's
 *    timeout, so in a healthy process one key is never in two calls at once.
 *  - A crash after 1 or 2 leaves a PENDING row: once its lease runs out, the
 *    stale-charge sweep (or the customer's next try) takes a new lease and
 *    repeats step 2 with the same key.
 *
 * Fencing rule (a settle delayed past its lease: lock wait, GC pause, DB failover):
 *  - Every lease taken bumps `lease_generation`; the holder keeps the number
 *    it got. Step 3 commits only if the row still carries that generation,
 *    checked under the row lock in the same transaction. A holder whose lease
 *    was taken over meanwhile commits nothing: the newer holder's outcome is
 *    the one recorded. Without this, a stalled holder whose wallet call was
 *    refused (refusals are not final per key: the customer may top up) could
 *    mark FAILED a period the newer holder has just been paid for, and dunning
 *    would charge it again.
 */
export const CHARGE_LEASE_SECONDS = 30;
export const WALLET_CALL_TIMEOUT_MS = 10_000;

/** A charge of `subject` holds its lease: the caller answers 409 and the client retries shortly. */
export const paymentInProgress = (subject: string) =>
  new DomainError("failed_precondition", "PAYMENT_IN_PROGRESS", `a payment for ${subject} is being processed; try again in a moment`);

/**
 * Claims the row for one caller until the lease (database time) runs out.
 * Returns the fencing generation the caller now holds, or null when someone
 * else holds the lease (or the row is no longer PENDING).
 */
export async function takeLease(em: EntityManager, chargeId: string): Promise<number | null> {
  const rows = await em.execute<{ lease_generation: number }[]>(
    `update subscription_charges set lease_until = now() + make_interval(secs => ?), lease_generation = lease_generation + 1
      where id = ? and status = 'PENDING' and (lease_until is null or lease_until < now())
      returning lease_generation`,
    [CHARGE_LEASE_SECONDS, chargeId],
  );
  return rows.length === 1 ? Number(rows[0]!.lease_generation) : null;
}

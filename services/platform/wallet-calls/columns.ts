import { p } from "@mikro-orm/core";

/**
 * The in-flight columns of every table whose rows carry a wallet call
 * (subscription charges, refunds, order credits; migration 0022). Only the
 * protocol (wallet-call.ts) writes them, except that a kind's `record` may
 * clear the lease of the row it settles.
 */
export const walletCallColumns = () => ({
  /** Database-time lease of the caller making the wallet call. */
  leaseUntil: p.datetime().nullable(),
  /** Fencing token: bumped by every lease taken; a settle commits only with the generation it took. */
  leaseGeneration: p.integer().default(0),
  /** Failed tries in a row (an RPC failure, a settle that could not commit); the next waits backoffSeconds. */
  settleFailures: p.integer().default(0),
  /** When the sweep may try again after a failure. */
  nextSettleAt: p.datetime().nullable(),
  /** Set after MAX_CALL_FAILURES: the sweep stops, reconciliation reports the row (PARKED_ROW). */
  parkedAt: p.datetime().nullable(),
  /** The last failure, for the operator (never shown to a merchant). */
  lastError: p.string().length(500).nullable(),
});

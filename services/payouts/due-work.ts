import { oldestOf, type DueWorkProbe } from "../platform/observability/due-work.ts";
import { PAYOUT_CALLS_TABLE } from "./payout-calls.ts";

/**
 * Lag probes of the payouts sweep (jobs.ts), each query the "due" condition
 * of its step: payout calls (sweepWalletCalls), chain checks (observeChain)
 * and claim expiry (expireDueClaims).
 */
export const payoutDueWork: DueWorkProbe[] = [
  {
    kind: "payout_call",
    group: "payments",
    // Due since its lease or back-off ran out, whichever is later; a row never tried since it was opened.
    oldestDue: (em, now) =>
      oldestOf(
        em,
        `select min(coalesce(greatest(lease_until, next_settle_at), created_at)) as oldest from ${PAYOUT_CALLS_TABLE}
          where status = 'PENDING' and parked_at is null and (lease_until is null or lease_until < ?) and (next_settle_at is null or next_settle_at <= ?)`,
        [now, now],
      ),
  },
  {
    kind: "payout_chain_check",
    group: "payments",
    oldestDue: (em, now) =>
      oldestOf(em, "select min(next_chain_check_at) as oldest from payouts where status = 'PROCESSING' and next_chain_check_at <= ?", [now]),
  },
  {
    kind: "refund_claim_expiry",
    group: "payments",
    oldestDue: (em, now) =>
      oldestOf(em, "select min(claim_expires_at) as oldest from order_refunds where status = 'AWAITING_ADDRESS' and claim_expires_at <= ?", [now]),
  },
];

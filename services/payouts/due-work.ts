import type { DueWorkProbe } from "../platform/observability/due-work.ts";
import { oldestDueChainCheck, oldestDuePayoutCall } from "./payout-store.ts";
import { oldestDueClaimExpiry } from "./order-refunds/order-refund-store.ts";

/**
 * Lag probes of the payouts sweep (jobs.ts), each query the "due" condition
 * of its step: payout calls (sweepWalletCalls), chain checks (observeChain)
 * and claim expiry (expireDueClaims).
 */
export const payoutDueWork: DueWorkProbe[] = [
  {
    kind: "payout_call",
    group: "payments",
    oldestDue: oldestDuePayoutCall,
  },
  {
    kind: "payout_chain_check",
    group: "payments",
    oldestDue: oldestDueChainCheck,
  },
  {
    kind: "refund_claim_expiry",
    group: "payments",
    oldestDue: oldestDueClaimExpiry,
  },
];

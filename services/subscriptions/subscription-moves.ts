import type { AuthorizationRow, SubscriptionRow } from "./entities.ts";
import { markAuthorization } from "./authorization-status.ts";
import type { CancellationReason } from "./contract.ts";

/**
 * What every cancel records, wherever it happens (a merchant's or customer's
 * cancel, a declined authorization, retries ending in CANCELLED): the reason,
 * the time, nothing left to bill, retry or resume, and an open approval link
 * closed. The status itself moved by the machine first (status-machine.ts).
 */
export function recordCancellation(sub: SubscriptionRow, at: Date, reason: CancellationReason, authorization?: AuthorizationRow | null): void {
  sub.cancellationReason = reason;
  sub.cancelledAt = at;
  sub.pausedFromStatus = null;
  sub.nextBillingAt = null;
  sub.nextRetryAt = null;
  // The link stops working; the expiry sweep no longer considers it.
  if (authorization?.status === "PENDING") markAuthorization(authorization, "cancel", at);
}

import { formatAmount } from "../platform/money.ts";
import { iso, isoOrNull } from "../platform/timestamps.ts";
import type { DestinationStatus } from "./contract.ts";
import type { PayoutDestinationRow, PayoutRow } from "./entities.ts";

/**
 * A destination's status is computed, not stored: REMOVED once removed,
 * else PENDING_ACTIVATION until activatesAt on the service clock (the
 * sandbox clock in sandbox mode), then ACTIVE. No sweep flips it, so it is
 * exact at every read and a moved sandbox clock applies at once.
 */
export function destinationStatus(d: PayoutDestinationRow, now: Date): DestinationStatus {
  if (d.removedAt) return "REMOVED";
  return now.getTime() < d.activatesAt.getTime() ? "PENDING_ACTIVATION" : "ACTIVE";
}

/** The merchant-facing destination record: REST bodies (through the RPC message) and event data share it. */
export function destinationRecord(d: PayoutDestinationRow, now: Date) {
  return {
    id: d.id,
    object: "payout_destination" as const,
    asset: d.asset,
    network: d.network,
    address: d.address,
    label: d.label ?? null,
    status: destinationStatus(d, now),
    activatesAt: iso(d.activatesAt),
    createdAt: iso(d.createdAt),
  };
}

/** The merchant-facing payout record (REST, events). */
export function payoutRecord(p: PayoutRow) {
  return {
    id: p.id,
    object: "payout" as const,
    status: p.status,
    destinationId: p.destinationId ?? null,
    asset: p.asset,
    network: p.network,
    address: p.address,
    amount: formatAmount(p.amount),
    fee: formatAmount(p.fee),
    txHash: p.txHash ?? null,
    failureReason: p.failureReason ?? null,
    source: p.source,
    createdAt: iso(p.createdAt),
    paidAt: isoOrNull(p.paidAt),
    metadata: p.metadata,
  };
}

/** What an operator sees: the merchant's record plus whose it is. */
export const adminPayoutRecord = (p: PayoutRow) => ({ ...payoutRecord(p), merchantId: p.merchantId });

import { formatAmount } from "../../platform/money.ts";
import { iso, isoOrNull } from "../../platform/timestamps.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";

/**
 * The merchant-facing change session: event data and, with the approval URL
 * added while it is open (change-session-rpc.ts), the REST body. The URL is
 * not part of the record: only the token's hash is stored, so the URL exists
 * only in the create response and in merchant reads.
 */
export function changeSessionRecord(s: ChangeSessionRow) {
  return {
    id: s.id,
    object: "subscription_change_session" as const,
    subscriptionId: s.subscriptionId,
    status: s.status,
    currentPlanId: s.currentPlanId,
    requestedPlanId: s.requestedPlanId,
    effectiveMode: s.effectiveMode,
    immediateChargeAmount: formatAmount(s.immediateChargeAmount),
    proration: s.proration ?? "NONE",
    // Signed decimal: "-3.2" was credited to the subscription, "3.2" charged; null until a PRORATE change applies.
    prorationAmount: s.prorationAmount == null ? null : formatAmount(s.prorationAmount),
    currency: s.requestedCurrency,
    successUrl: s.successUrl,
    cancelUrl: s.cancelUrl,
    reason: s.reason ?? null,
    metadata: s.metadata,
    expiresAt: iso(s.expiresAt),
    scheduledFor: isoOrNull(s.scheduledFor),
    cancellationReason: s.cancellationReason ?? null,
    supersededBy: s.supersededBy ?? null,
    chargeId: s.chargeId ?? null,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
    version: s.version,
    approvedAt: isoOrNull(s.approvedAt),
    appliedAt: isoOrNull(s.appliedAt),
    declinedAt: isoOrNull(s.declinedAt),
    expiredAt: isoOrNull(s.expiredAt),
    cancelledAt: isoOrNull(s.cancelledAt),
  };
}

export type ChangeSessionRecord = ReturnType<typeof changeSessionRecord>;

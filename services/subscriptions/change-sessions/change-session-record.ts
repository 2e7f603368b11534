import { formatAmount } from "../../platform/money.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/**
 * The merchant-facing change session: event data and, through the RPC
 * message, the REST body. The approval URL is not part of it: only the
 * token's hash is stored, so the URL exists only in the create response.
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
    currency: s.requestedCurrency,
    successUrl: s.successUrl,
    cancelUrl: s.cancelUrl,
    reason: s.reason ?? null,
    metadata: s.metadata,
    expiresAt: s.expiresAt.toISOString(),
    scheduledFor: iso(s.scheduledFor),
    cancellationReason: s.cancellationReason ?? null,
    supersededBy: s.supersededBy ?? null,
    chargeId: s.chargeId ?? null,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
    approvedAt: iso(s.approvedAt),
    appliedAt: iso(s.appliedAt),
    declinedAt: iso(s.declinedAt),
    expiredAt: iso(s.expiredAt),
    cancelledAt: iso(s.cancelledAt),
  };
}

export type ChangeSessionRecord = ReturnType<typeof changeSessionRecord>;

import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { ChangeSession } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";

const iso = (t: Timestamp | undefined): string | null => (t ? timestampDate(t).toISOString() : null);

/** The REST change session: the service's event data (changeSessionRecord) plus the approval URL while it is open. */
export function changeSessionBody(s: ChangeSession) {
  return {
    id: s.id,
    object: "subscription_change_session",
    subscriptionId: s.subscriptionId,
    status: s.status,
    currentPlanId: s.currentPlanId,
    requestedPlanId: s.requestedPlanId,
    effectiveMode: s.effectiveMode,
    immediateChargeAmount: s.immediateChargeAmount,
    currency: s.currency,
    successUrl: s.successUrl,
    cancelUrl: s.cancelUrl,
    reason: s.reason ?? null,
    metadata: JSON.parse(s.metadataJson || "{}") as Record<string, unknown>,
    expiresAt: iso(s.expiresAt),
    scheduledFor: iso(s.scheduledFor),
    cancellationReason: s.cancellationReason ?? null,
    supersededBy: s.supersededBy ?? null,
    chargeId: s.chargeId ?? null,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
    approvedAt: iso(s.approvedAt),
    appliedAt: iso(s.appliedAt),
    declinedAt: iso(s.declinedAt),
    expiredAt: iso(s.expiredAt),
    cancelledAt: iso(s.cancelledAt),
    approvalUrl: s.approvalUrl ?? null,
  };
}

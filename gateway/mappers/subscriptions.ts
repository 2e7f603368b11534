import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Subscription } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { authorizationMinutes } from "../../services/subscriptions/contract.ts";

const iso = (t: Timestamp | undefined): string | null => (t ? timestampDate(t).toISOString() : null);

/** The REST subscription record: the same shape as the service's event data (subscriptionRecord). */
export function subscriptionBody(s: Subscription) {
  const a = s.authorization;
  return {
    id: s.id,
    object: "subscription",
    planId: s.planId,
    status: s.status,
    externalReference: s.externalReference,
    serviceReference: s.serviceReference ?? null,
    walletUserId: s.walletUserId,
    customerEmail: s.customerEmail ?? null,
    successUrl: s.successUrl,
    cancelUrl: s.cancelUrl,
    metadata: JSON.parse(s.metadataJson || "{}") as Record<string, unknown>,
    authorizationExpiresInMinutes: a?.createdAt && a.expiresAt ? authorizationMinutes(timestampDate(a.createdAt), timestampDate(a.expiresAt)) : null,
    fundingAsset: s.fundingAsset ?? null,
    billingAnchor: iso(s.billingAnchor),
    currentPeriodStart: iso(s.currentPeriodStart),
    currentPeriodEnd: iso(s.currentPeriodEnd),
    nextBillingAt: iso(s.nextBillingAt),
    trialEnd: iso(s.trialEnd),
    cancellationReason: s.cancellationReason ?? null,
    authorization: a
      ? {
          id: a.id,
          status: a.status,
          expiresAt: iso(a.expiresAt),
          approvedAt: iso(a.approvedAt),
          declinedAt: iso(a.declinedAt),
          expiredAt: iso(a.expiredAt),
          createdAt: iso(a.createdAt),
        }
      : null,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
    activatedAt: iso(s.activatedAt),
    pausedAt: iso(s.pausedAt),
    cancelledAt: iso(s.cancelledAt),
    expiredAt: iso(s.expiredAt),
    pastDueSince: iso(s.pastDueSince),
    nextRetryAt: iso(s.nextRetryAt),
    unpaidAt: iso(s.unpaidAt),
  };
}

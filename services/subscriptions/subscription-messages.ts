import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ChargeRecord, SubscriptionRecord } from "./subscription-record.ts";

const ts = (iso: string) => timestampFromDate(new Date(iso));
const optionalTs = (iso: string | null) => (iso === null ? undefined : ts(iso));

/** The RPC message is the record (subscription-record.ts) field by field: REST and events share one shape. */
export function subscriptionMessage(merchantId: string, r: SubscriptionRecord) {
  return {
    id: r.id,
    merchantId,
    planId: r.planId,
    status: r.status,
    externalReference: r.externalReference,
    serviceReference: r.serviceReference ?? undefined,
    walletUserId: r.walletUserId,
    customerEmail: r.customerEmail ?? undefined,
    successUrl: r.successUrl,
    cancelUrl: r.cancelUrl,
    metadataJson: JSON.stringify(r.metadata),
    fundingAsset: r.fundingAsset ?? undefined,
    billingAnchor: optionalTs(r.billingAnchor),
    currentPeriodStart: optionalTs(r.currentPeriodStart),
    currentPeriodEnd: optionalTs(r.currentPeriodEnd),
    nextBillingAt: optionalTs(r.nextBillingAt),
    trialEnd: optionalTs(r.trialEnd),
    cancellationReason: r.cancellationReason ?? undefined,
    authorization: r.authorization
      ? {
          id: r.authorization.id,
          status: r.authorization.status,
          expiresAt: ts(r.authorization.expiresAt),
          approvedAt: optionalTs(r.authorization.approvedAt),
          declinedAt: optionalTs(r.authorization.declinedAt),
          expiredAt: optionalTs(r.authorization.expiredAt),
          createdAt: ts(r.authorization.createdAt),
        }
      : undefined,
    createdAt: ts(r.createdAt),
    updatedAt: ts(r.updatedAt),
    activatedAt: optionalTs(r.activatedAt),
    pausedAt: optionalTs(r.pausedAt),
    cancelledAt: optionalTs(r.cancelledAt),
    expiredAt: optionalTs(r.expiredAt),
    pastDueSince: optionalTs(r.pastDueSince),
    nextRetryAt: optionalTs(r.nextRetryAt),
    unpaidAt: optionalTs(r.unpaidAt),
  };
}

export function chargeMessage(c: ChargeRecord) {
  return {
    id: c.id,
    subscriptionId: c.subscriptionId,
    periodIndex: c.periodIndex,
    periodStart: ts(c.periodStart),
    periodEnd: ts(c.periodEnd),
    amount: c.amount,
    currency: c.currency,
    asset: c.asset,
    assetAmount: c.assetAmount ?? undefined,
    rate: c.rate ?? undefined,
    status: c.status,
    failureReason: c.failureReason ?? undefined,
    attempt: c.attempt,
    walletTransactionId: c.walletTransactionId ?? undefined,
    createdAt: ts(c.createdAt),
  };
}

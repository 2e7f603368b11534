import { IntervalSchema, type Plan } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { toOptionalTimestamp, toTimestamp } from "../platform/timestamps.ts";
import { withRecordJson } from "../platform/rpc/record-json.ts";
import { enumName } from "../platform/rpc/proto-enums.ts";
import type { ChargeRecord, SubscriptionRecord } from "./subscription-record.ts";

/**
 * The RPC message is the record (subscription-record.ts) field by field for
 * internal callers, and carries the record itself (record_json) for the REST
 * body: REST and events share one shape, written once.
 */
export function subscriptionMessage(merchantId: string, r: SubscriptionRecord) {
  return withRecordJson(
    {
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
      fallbackAssets: r.fallbackAssets,
      billingAnchor: toOptionalTimestamp(r.billingAnchor),
      currentPeriodStart: toOptionalTimestamp(r.currentPeriodStart),
      currentPeriodEnd: toOptionalTimestamp(r.currentPeriodEnd),
      nextBillingAt: toOptionalTimestamp(r.nextBillingAt),
      trialEnd: toOptionalTimestamp(r.trialEnd),
      cancellationReason: r.cancellationReason ?? undefined,
      authorization: r.authorization
        ? {
            id: r.authorization.id,
            status: r.authorization.status,
            expiresAt: toTimestamp(r.authorization.expiresAt),
            approvedAt: toOptionalTimestamp(r.authorization.approvedAt),
            declinedAt: toOptionalTimestamp(r.authorization.declinedAt),
            expiredAt: toOptionalTimestamp(r.authorization.expiredAt),
            createdAt: toTimestamp(r.authorization.createdAt),
          }
        : undefined,
      createdAt: toTimestamp(r.createdAt),
      updatedAt: toTimestamp(r.updatedAt),
      activatedAt: toOptionalTimestamp(r.activatedAt),
      pausedAt: toOptionalTimestamp(r.pausedAt),
      cancelledAt: toOptionalTimestamp(r.cancelledAt),
      expiredAt: toOptionalTimestamp(r.expiredAt),
      pastDueSince: toOptionalTimestamp(r.pastDueSince),
      nextRetryAt: toOptionalTimestamp(r.nextRetryAt),
      unpaidAt: toOptionalTimestamp(r.unpaidAt),
    },
    r,
  );
}

export function chargeMessage(c: ChargeRecord) {
  return withRecordJson(
    {
      id: c.id,
      subscriptionId: c.subscriptionId,
      periodIndex: c.periodIndex,
      periodStart: toTimestamp(c.periodStart),
      periodEnd: toTimestamp(c.periodEnd),
      amount: c.amount,
      currency: c.currency,
      asset: c.asset,
      assetAmount: c.assetAmount ?? undefined,
      rate: c.rate ?? undefined,
      status: c.status,
      failureReason: c.failureReason ?? undefined,
      attempt: c.attempt,
      walletTransactionId: c.walletTransactionId ?? undefined,
      createdAt: toTimestamp(c.createdAt),
      amountRefunded: c.amountRefunded,
      assetAmountRefunded: c.assetAmountRefunded,
      fundedByFallback: c.fundedByFallback,
      receiptUrl: c.receiptUrl ?? undefined,
    },
    c,
  );
}

/** What the hosted approval pages show of a plan (the authorization's and both plans of a change). */
export function planSummary(plan: Plan) {
  return {
    id: plan.id,
    name: plan.name,
    description: plan.description,
    amount: plan.amount,
    currency: plan.currency,
    interval: enumName(IntervalSchema, plan.interval),
    intervalCount: plan.intervalCount,
    trialDays: plan.trialDays,
    maximumChargeAmount: plan.maximumChargeAmount,
  };
}

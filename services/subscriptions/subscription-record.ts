import { formatAmount } from "../platform/money.ts";
import { iso, isoOrNull } from "../platform/timestamps.ts";
import type { AuthorizationRow, ChargeRow, SubscriptionRow } from "./entities.ts";

/**
 * The merchant-facing subscription record: the one builder for event data
 * and REST bodies (the RPC message carries it as record_json; its typed
 * fields are derived from it in subscription-messages.ts). The authorization
 * URL is not part of it (not in events, lists or GET): it is answered by a
 * create, and by the same create repeated while the customer has not
 * answered (repeated-create.ts).
 */
export function subscriptionRecord(sub: SubscriptionRow, authorization: AuthorizationRow | null) {
  return {
    id: sub.id,
    object: "subscription" as const,
    planId: sub.planId,
    status: sub.status,
    externalReference: sub.externalReference,
    serviceReference: sub.serviceReference ?? null,
    walletUserId: sub.walletUserId,
    customerEmail: sub.customerEmail ?? null,
    successUrl: sub.successUrl,
    cancelUrl: sub.cancelUrl,
    metadata: sub.metadata,
    // A create field too: the authorization's lifetime (its expiry was set to createdAt + these minutes).
    authorizationExpiresInMinutes: authorization ? authorizationMinutes(authorization.createdAt, authorization.expiresAt) : null,
    fundingAsset: sub.fundingAsset ?? null,
    // Tried in order when the funding asset cannot pay (issue 26); [] when none.
    fallbackAssets: [...(sub.fallbackAssets ?? [])],
    billingAnchor: isoOrNull(sub.billingAnchor),
    currentPeriodStart: isoOrNull(sub.currentPeriodStart),
    currentPeriodEnd: isoOrNull(sub.currentPeriodEnd),
    nextBillingAt: isoOrNull(sub.nextBillingAt),
    trialEnd: isoOrNull(sub.trialEnd),
    cancellationReason: sub.cancellationReason ?? null,
    authorization: authorization ? authorizationRecord(authorization) : null,
    createdAt: iso(sub.createdAt),
    updatedAt: iso(sub.updatedAt),
    // Raised by one with each change: receivers drop an event whose version is not newer (platform/record-version.ts).
    version: sub.version,
    activatedAt: isoOrNull(sub.activatedAt),
    pausedAt: isoOrNull(sub.pausedAt),
    cancelledAt: isoOrNull(sub.cancelledAt),
    expiredAt: isoOrNull(sub.expiredAt),
    // Dunning (renewals/renewal-outcome.ts): the retry is only scheduled while PAST_DUE.
    pastDueSince: isoOrNull(sub.pastDueSince),
    nextRetryAt: sub.status === "PAST_DUE" ? isoOrNull(sub.nextRetryAt) : null,
    unpaidAt: isoOrNull(sub.unpaidAt),
    // Pricing (pricing/, issue 25).
    discount: discountRecord(sub),
    creditBalance: formatAmount(sub.creditBalance ?? "0"),
  };
}

/** The subscription's discount, or null: the coupon, the code it came with, when it started, periods left (null: FOREVER). */
export function discountRecord(sub: SubscriptionRow) {
  if (!sub.discountCouponId) return null;
  return {
    couponId: sub.discountCouponId,
    promotionCode: sub.discountPromotionCode ?? null,
    start: isoOrNull(sub.discountStart),
    periodsRemaining: sub.discountPeriodsRemaining ?? null,
  };
}

/** Whole minutes from an authorization's creation to its expiry (the request's authorizationExpiresInMinutes). */

function authorizationRecord(a: AuthorizationRow) {
  return {
    id: a.id,
    status: a.status,
    expiresAt: iso(a.expiresAt),
    approvedAt: isoOrNull(a.approvedAt),
    declinedAt: isoOrNull(a.declinedAt),
    expiredAt: isoOrNull(a.expiredAt),
    createdAt: iso(a.createdAt),
  };
}

/** A charge as merchants see it: event data and the charges list. numeric columns reload padded. */
export function chargeRecord(c: ChargeRow) {
  return {
    id: c.id,
    object: "subscription_charge" as const,
    subscriptionId: c.subscriptionId,
    periodIndex: c.periodIndex,
    periodStart: iso(c.periodStart),
    periodEnd: iso(c.periodEnd),
    amount: formatAmount(c.amount),
    // amount = subtotal − discountAmount − creditApplied (pricing/period-price.ts); rows before issue 25 had no parts.
    subtotal: formatAmount(c.subtotal ?? c.amount),
    discountAmount: formatAmount(c.discountAmount ?? "0"),
    creditApplied: formatAmount(c.creditApplied ?? "0"),
    couponId: c.couponId ?? null,
    currency: c.currency,
    asset: c.asset,
    assetAmount: c.assetAmount == null ? null : formatAmount(c.assetAmount),
    rate: c.rate == null ? null : formatAmount(c.rate),
    status: c.status,
    failureReason: c.failureReason ?? null,
    attempt: c.attempt,
    walletTransactionId: c.walletTransactionId ?? null,
    createdAt: iso(c.createdAt),
    amountRefunded: formatAmount(c.amountRefunded ?? "0"),
    assetAmountRefunded: formatAmount(c.assetAmountRefunded ?? "0"),
    // Paid from a fallback asset (`asset`) because the funding asset could not.
    fundedByFallback: c.fundedByFallback === true,
    rateAt: isoOrNull(c.rateAt),
    receiptNumber: c.receiptNumber ?? null,
    receiptUrl: c.receiptUrl ?? null,
  };
}

export type SubscriptionRecord = ReturnType<typeof subscriptionRecord>;
export type ChargeRecord = ReturnType<typeof chargeRecord>;

/** The authorization window as the merchant asked for it, in whole minutes. */
export const authorizationMinutes = (createdAt: Date, expiresAt: Date): number => Math.round((expiresAt.getTime() - createdAt.getTime()) / 60_000);

import { formatAmount } from "../platform/money.ts";
import type { AuthorizationRow, ChargeRow, SubscriptionRow } from "./entities.ts";

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/**
 * The merchant-facing subscription record: the one builder for event data
 * and, through the RPC message (rpc.ts maps this record field by field), for
 * REST bodies. The authorization URL is not part of it: only the token's
 * hash is stored, so the URL exists only in the create response.
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
    billingAnchor: iso(sub.billingAnchor),
    currentPeriodStart: iso(sub.currentPeriodStart),
    currentPeriodEnd: iso(sub.currentPeriodEnd),
    nextBillingAt: iso(sub.nextBillingAt),
    trialEnd: iso(sub.trialEnd),
    cancellationReason: sub.cancellationReason ?? null,
    authorization: authorization ? authorizationRecord(authorization) : null,
    createdAt: sub.createdAt.toISOString(),
    updatedAt: sub.updatedAt.toISOString(),
    activatedAt: iso(sub.activatedAt),
    pausedAt: iso(sub.pausedAt),
    cancelledAt: iso(sub.cancelledAt),
    expiredAt: iso(sub.expiredAt),
    // Dunning (renewals/renewal-outcome.ts): the retry is only scheduled while PAST_DUE.
    pastDueSince: iso(sub.pastDueSince),
    nextRetryAt: sub.status === "PAST_DUE" ? iso(sub.nextRetryAt) : null,
    unpaidAt: iso(sub.unpaidAt),
  };
}

/** Whole minutes from an authorization's creation to its expiry (the request's authorizationExpiresInMinutes). */
export const authorizationMinutes = (createdAt: Date, expiresAt: Date): number => Math.round((expiresAt.getTime() - createdAt.getTime()) / 60_000);

export function authorizationRecord(a: AuthorizationRow) {
  return {
    id: a.id,
    status: a.status,
    expiresAt: a.expiresAt.toISOString(),
    approvedAt: iso(a.approvedAt),
    declinedAt: iso(a.declinedAt),
    expiredAt: iso(a.expiredAt),
    createdAt: a.createdAt.toISOString(),
  };
}

/** A charge as merchants see it (event data now; the charges list later). numeric columns reload padded. */
export function chargeRecord(c: ChargeRow) {
  return {
    id: c.id,
    object: "subscription_charge" as const,
    subscriptionId: c.subscriptionId,
    periodIndex: c.periodIndex,
    periodStart: c.periodStart.toISOString(),
    periodEnd: c.periodEnd.toISOString(),
    amount: formatAmount(c.amount),
    currency: c.currency,
    asset: c.asset,
    assetAmount: c.assetAmount == null ? null : formatAmount(c.assetAmount),
    rate: c.rate == null ? null : formatAmount(c.rate),
    status: c.status,
    failureReason: c.failureReason ?? null,
    attempt: c.attempt,
    walletTransactionId: c.walletTransactionId ?? null,
    createdAt: c.createdAt.toISOString(),
    amountRefunded: formatAmount(c.amountRefunded ?? "0"),
    assetAmountRefunded: formatAmount(c.assetAmountRefunded ?? "0"),
  };
}

export type SubscriptionRecord = ReturnType<typeof subscriptionRecord>;
export type AuthorizationRecord = ReturnType<typeof authorizationRecord>;
export type ChargeRecord = ReturnType<typeof chargeRecord>;

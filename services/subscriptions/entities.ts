import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { walletCallColumns } from "../platform/wallet-calls/columns.ts";
import type { SubscriptionStatus } from "./status-machine.ts";
import { CHARGE_STATUSES, type AuthorizationStatus, type CancellationReason, type ChargePurpose, type ChargeStatus } from "./contract.ts";

export { CHARGE_STATUSES };

export const Subscription = defineEntity({
  name: "Subscription",
  tableName: "subscriptions",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    planId: p.uuid(),
    walletUserId: p.uuid(),
    customerEmail: p.string().length(254).nullable(),
    externalReference: p.string().length(200),
    serviceReference: p.string().length(200).nullable(),
    successUrl: p.string().length(2048),
    cancelUrl: p.string().length(2048),
    metadata: p.json<Record<string, unknown>>(),
    status: p.string().length(32).$type<SubscriptionStatus>(),
    pausedFromStatus: p.string().length(32).$type<SubscriptionStatus>().nullable(),
    cancellationReason: p.string().length(64).$type<CancellationReason>().nullable(),
    fundingAsset: p.string().length(16).nullable(),
    billingAnchor: p.datetime().nullable(),
    currentPeriodStart: p.datetime().nullable(),
    currentPeriodEnd: p.datetime().nullable(),
    nextBillingAt: p.datetime().nullable(),
    trialEnd: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** Raised by one with each change (platform/record-version.ts), in the transaction recording its event (migration 0020). */
    version: p.integer().default(1),
    activatedAt: p.datetime().nullable(),
    pausedAt: p.datetime().nullable(),
    cancelledAt: p.datetime().nullable(),
    expiredAt: p.datetime().nullable(),
    // Recurring billing (migration 0006; docs/merchant-api.md, "Recurring billing").
    /** The period nextBillingAt starts, i.e. the one the next charge pays for. */
    nextPeriodIndex: p.integer().default(0),
    /** The period that starts at billingAnchor: boundaries are counted from it (a plan change to another cadence re-anchors). */
    anchorPeriodIndex: p.integer().default(0),
    /** First failure of the current dunning run; null unless PAST_DUE (or UNPAID). */
    pastDueSince: p.datetime().nullable(),
    /** Scheduled retries already made in the current dunning run. */
    retryCount: p.integer().default(0),
    nextRetryAt: p.datetime().nullable(),
    unpaidAt: p.datetime().nullable(),
    /** Last period whose subscription.charge_upcoming was recorded. */
    notifiedPeriodIndex: p.integer().nullable(),
    /** Database-time claim of the renewal sweep (see renewals/find-due-renewals.ts). */
    renewalClaimedUntil: p.datetime().nullable(),
    // Issue 26 (migration 0025).
    /** Tried in order when the funding asset cannot pay a renewal or retry (at most two, distinct, not the funding asset). */
    fallbackAssets: p.array<string>().default([]),
    /** Last period whose subscription.charge_at_risk was recorded (once per period). */
    atRiskPeriodIndex: p.integer().nullable(),
    /** What the funding asset lacked, in it, when the risk was recorded; null once a balance covers the charge again. */
    atRiskShortfall: p.decimal("string").precision(38).scale(18).nullable(),
    // The discount (pricing/, migration 0026): the coupon's terms copied when it was applied, so a price needs no join.
    discountCouponId: p.uuid().nullable(),
    discountPromotionCodeId: p.uuid().nullable(),
    discountPromotionCode: p.string().length(50).nullable(),
    discountPercentOff: p.decimal("string").nullable(),
    discountAmountOff: p.decimal("string").precision(38).scale(18).nullable(),
    discountCurrency: p.string().length(16).nullable(),
    discountStart: p.datetime().nullable(),
    /** Periods still discounted; null with a coupon: FOREVER. */
    discountPeriodsRemaining: p.integer().nullable(),
    /** Plan currency, spent by the next charges before any money moves (a prorated downgrade). */
    creditBalance: p.decimal("string").precision(38).scale(18).default("0"),
    creditCurrency: p.string().length(16).nullable(),
    /** The Idempotency-Key it was created under (migration 0036): only a retry under it answers the subscription again (repeated-create.ts). */
    createIdempotencyKey: p.string().length(200).nullable(),
  },
});

/** Only the SHA-256 of the token is stored; the URL holding the token exists only in the create response. */
export const SubscriptionAuthorization = defineEntity({
  name: "SubscriptionAuthorization",
  tableName: "subscription_authorizations",
  properties: {
    id: p.uuid().primary(),
    subscriptionId: p.uuid(),
    merchantId: p.uuid(),
    tokenHash: p.string().length(64).unique(),
    status: p.string().length(16).$type<AuthorizationStatus>(),
    expiresAt: p.datetime(),
    approvedAt: p.datetime().nullable(),
    declinedAt: p.datetime().nullable(),
    expiredAt: p.datetime().nullable(),
    usedAt: p.datetime().nullable(),
    approvedWalletUserId: p.uuid().nullable(),
    fundingAsset: p.string().length(16).nullable(),
    createdAt: p.datetime(),
  },
});

/** One row per charge attempt; see migration 0003 for the exactly-once rules. */
export const SubscriptionCharge = defineEntity({
  name: "SubscriptionCharge",
  tableName: "subscription_charges",
  properties: {
    id: p.uuid().primary(),
    subscriptionId: p.uuid(),
    merchantId: p.uuid(),
    walletUserId: p.uuid(),
    periodIndex: p.integer(),
    periodStart: p.datetime(),
    periodEnd: p.datetime(),
    amount: p.decimal("string").precision(38).scale(18),
    currency: p.string().length(16),
    asset: p.string().length(16),
    assetAmount: p.decimal("string").precision(38).scale(18).nullable(),
    rate: p.decimal("string").nullable(),
    status: p.string().length(16).$type<ChargeStatus>(),
    failureReason: p.string().length(64).nullable(),
    attempt: p.integer(),
    walletTransactionId: p.string().length(64).nullable(),
    createdAt: p.datetime(),
    settledAt: p.datetime().nullable(),
    /** What the charge pays for: its settle hands the outcome to that purpose's handler (charges/settle-charge.ts). */
    purpose: p.string().length(16).$type<ChargePurpose>(),
    ...walletCallColumns(),
    /** Set on a plan change's immediate charge (not a period charge; see migration 0007). */
    changeSessionId: p.uuid().nullable(),
    /** Refunded so far (refunds/, migration 0010), in the currency and in the asset. */
    amountRefunded: p.decimal("string").precision(38).scale(18).default("0"),
    assetAmountRefunded: p.decimal("string").precision(38).scale(18).default("0"),
    /** Paid from a fallback asset because the funding asset could not (migration 0025); `asset` is the one used. */
    fundedByFallback: p.boolean().default(false),
    // The price's parts (pricing/period-price.ts, migration 0026): amount = subtotal − discountAmount − creditApplied.
    /** The plan amount (or a plan change's charge before credit); null on rows older than migration 0026 (= amount). */
    subtotal: p.decimal("string").precision(38).scale(18).nullable(),
    discountAmount: p.decimal("string").precision(38).scale(18).default("0"),
    creditApplied: p.decimal("string").precision(38).scale(18).default("0"),
    couponId: p.uuid().nullable(),
    rateAt: p.datetime().nullable(),
    // The receipt of a SUCCEEDED charge above 0 (charges/receipt-number.ts).
    receiptNumber: p.string().length(40).nullable(),
    receiptToken: p.string().length(64).nullable(),
    receiptUrl: p.string().length(2200).nullable(),
  },
});

export type SubscriptionRow = InferEntity<typeof Subscription>;
export type AuthorizationRow = InferEntity<typeof SubscriptionAuthorization>;
export type ChargeRow = InferEntity<typeof SubscriptionCharge>;

export const subscriptionEntities = [Subscription, SubscriptionAuthorization, SubscriptionCharge];

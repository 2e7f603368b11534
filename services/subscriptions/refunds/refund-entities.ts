import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { walletCallColumns } from "../../platform/wallet-calls/columns.ts";
import type { RefundStatus } from "./contract.ts";

/** One row per refund attempt (migration 0010): PENDING reserves its amount until the wallet answered. */
export const SubscriptionRefund = defineEntity({
  name: "SubscriptionRefund",
  tableName: "subscription_refunds",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    chargeId: p.uuid(),
    subscriptionId: p.uuid(),
    walletUserId: p.uuid(),
    amount: p.decimal("string").precision(38).scale(18),
    currency: p.string().length(16),
    asset: p.string().length(16),
    assetAmount: p.decimal("string").precision(38).scale(18),
    status: p.string().length(16).$type<RefundStatus>(),
    failureReason: p.string().length(64).nullable(),
    reason: p.string().length(500).nullable(),
    metadata: p.json<Record<string, unknown>>(),
    idempotencyKey: p.string().length(200).nullable(),
    walletTransactionId: p.string().length(64).nullable(),
    /** Owed by the service (an automatic refund), not asked for by the merchant: a low merchant balance retries it instead of failing it. */
    owed: p.boolean().default(false),
    ...walletCallColumns(),
    createdAt: p.datetime(),
    settledAt: p.datetime().nullable(),
  },
});

export type RefundRow = InferEntity<typeof SubscriptionRefund>;

export const refundEntities = [SubscriptionRefund];

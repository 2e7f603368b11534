import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { walletCallColumns } from "../platform/wallet-calls/columns.ts";
import type { OrderRefundStatus, PayoutSource, PayoutStatus } from "./contract.ts";

/** An address a merchant may pay out to (migration 0024); its status is computed from activatesAt and removedAt. */
export const PayoutDestination = defineEntity({
  name: "PayoutDestination",
  tableName: "payout_destinations",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    asset: p.string().length(16),
    network: p.string().length(16),
    address: p.string().length(128),
    label: p.string().length(200).nullable(),
    activatesAt: p.datetime(),
    removedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});

/** One payout: the business record; its money and chain calls are payout_calls rows. */
export const Payout = defineEntity({
  name: "Payout",
  tableName: "payouts",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    source: p.string().length(16).$type<PayoutSource>(),
    sourceId: p.uuid().nullable(),
    destinationId: p.uuid().nullable(),
    asset: p.string().length(16),
    network: p.string().length(16),
    /** Null only for an order refund waiting for its claim (AWAITING_ADDRESS, then EXPIRED). */
    address: p.string().length(128).nullable(),
    amount: p.decimal("string").precision(38).scale(18),
    fee: p.decimal("string").precision(38).scale(18),
    status: p.string().length(16).$type<PayoutStatus>(),
    txHash: p.string().length(100).nullable(),
    failureReason: p.string().length(500).nullable(),
    metadata: p.json<Record<string, unknown>>(),
    idempotencyKey: p.string().length(200).nullable(),
    debitedAt: p.datetime().nullable(),
    reversedAt: p.datetime().nullable(),
    submittedAt: p.datetime().nullable(),
    paidAt: p.datetime().nullable(),
    failedAt: p.datetime().nullable(),
    cancelledAt: p.datetime().nullable(),
    reviewRequired: p.boolean().default(false),
    nextChainCheckAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

const PAYOUT_CALL_KINDS = ["DEBIT", "SUBMIT", "REVERSAL"] as const;
export type PayoutCallKind = (typeof PAYOUT_CALL_KINDS)[number];
type PayoutCallStatus = "PENDING" | "DONE" | "REFUSED" | "VOID";

/**
 * One money-moving call of a payout, on the wallet-call protocol: DEBIT
 * (amount + fee leave the balance), SUBMIT (the chain transfer), REVERSAL
 * (the money back). At most one of each per payout.
 */
export const PayoutCall = defineEntity({
  name: "PayoutCall",
  tableName: "payout_calls",
  properties: {
    id: p.uuid().primary(),
    payoutId: p.uuid(),
    kind: p.string().length(16).$type<PayoutCallKind>(),
    status: p.string().length(16).$type<PayoutCallStatus>(),
    walletTransactionId: p.string().length(64).nullable(),
    txHash: p.string().length(100).nullable(),
    amount: p.decimal("string").precision(38).scale(18),
    asset: p.string().length(16),
    ...walletCallColumns(),
    createdAt: p.datetime(),
    settledAt: p.datetime().nullable(),
  },
});

/**
 * A refund of a payment order (migration 0027): its money and chain transfer
 * are its payout's (source ORDER_REFUND, sourceId = this id); the status
 * follows the payout's, moved in the same transaction (order-refunds/).
 */
export const OrderRefund = defineEntity({
  name: "OrderRefund",
  tableName: "order_refunds",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    paymentOrderId: p.uuid(),
    payoutId: p.uuid(),
    asset: p.string().length(16),
    amount: p.decimal("string").precision(38).scale(18),
    status: p.string().length(16).$type<OrderRefundStatus>(),
    address: p.string().length(128).nullable(),
    claimTokenHash: p.string().length(64).nullable(),
    claimExpiresAt: p.datetime().nullable(),
    idempotencyKey: p.string().length(200).nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type OrderRefundRow = InferEntity<typeof OrderRefund>;

export type PayoutDestinationRow = InferEntity<typeof PayoutDestination>;
export type PayoutRow = InferEntity<typeof Payout>;
export type PayoutCallRow = InferEntity<typeof PayoutCall>;

export const payoutEntities = [PayoutDestination, Payout, PayoutCall, OrderRefund];

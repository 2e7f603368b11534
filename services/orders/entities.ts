import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { walletCallColumns } from "../platform/wallet-calls/columns.ts";
import { COUNTED_REFUND_STATUSES } from "../payouts/contract.ts";
import { CREDIT_STATUSES } from "./contract.ts";
import type { OrderStatus } from "./order-status.ts";

/** The SQL list of the counted refund statuses (constants of the payouts contract, never input). */
const COUNTED_REFUND_SQL = COUNTED_REFUND_STATUSES.map((s) => `'${s}'`).join(",");

/**
 * A one-time payment order. Amount columns are numeric(38,18) and reload
 * padded: build merchant-facing values with formatAtScale (order-record.ts).
 * decimals, network and required_confirmations are copied from the asset
 * registry at creation, so detecting payments never needs the wallet.
 */
export const PaymentOrder = defineEntity({
  name: "PaymentOrder",
  tableName: "payment_orders",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    externalId: p.string().length(200),
    externalCustomerId: p.string().length(200),
    asset: p.string().length(32),
    network: p.string().length(32),
    decimals: p.smallint(),
    requiredConfirmations: p.integer(),
    address: p.string().length(128),
    derivationKey: p.string().length(100),
    derivationIndex: p.integer(),
    amountToPay: p.decimal("string").precision(38).scale(18),
    requestedAmount: p.decimal("string").precision(38).scale(18),
    requestedCurrency: p.string().length(16).nullable(),
    rate: p.string().length(100).nullable(),
    rateAt: p.datetime().nullable(),
    status: p.string().length(16).$type<OrderStatus>(),
    expiresAt: p.datetime(),
    amountPaid: p.decimal("string").precision(38).scale(18),
    overpaidAmount: p.decimal("string").precision(38).scale(18),
    amountPaidLate: p.decimal("string").precision(38).scale(18),
    latePayment: p.boolean(),
    underpaymentTolerancePercent: p.decimal("string").precision(5).scale(2),
    requestFingerprint: p.string().length(64),
    metadata: p.json<Record<string, unknown>>(),
    paidAt: p.datetime().nullable(),
    expiredAt: p.datetime().nullable(),
    settledAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** Raised by one with each change (platform/record-version.ts), in the transaction recording its event (migration 0020). */
    version: p.integer().default(1),
    /**
     * What its refunds gave back or have on their way (the payouts service's
     * order_refunds, statuses COUNTED_REFUND_STATUSES of its contract):
     * read, never written, here. Decision: a read-only subquery keeps the
     * order record the one place its fields are built, without an RPC from
     * orders back to payouts on every read and inside every event's transaction.
     */
    amountRefunded: p
      .decimal("string")
      .formula(
        (cols) => `(select coalesce(sum(r.amount), 0) from order_refunds r where r.payment_order_id = ${cols}.id and r.status in (${COUNTED_REFUND_SQL}))`,
      )
      .persist(false)
      .nullable(),
  },
});

export type PaymentOrderRow = InferEntity<typeof PaymentOrder>;

/** A transfer to an order's address, as reported by the chain watcher. */
export const OrderPayment = defineEntity({
  name: "OrderPayment",
  tableName: "payment_order_payments",
  properties: {
    id: p.uuid().primary(),
    orderId: p.uuid(),
    merchantId: p.uuid(),
    asset: p.string().length(32),
    network: p.string().length(32),
    address: p.string().length(128),
    txId: p.string().length(200),
    amount: p.decimal("string").precision(38).scale(18),
    confirmations: p.integer(),
    late: p.boolean(),
    creditId: p.uuid().nullable(),
    seenAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type OrderPaymentRow = InferEntity<typeof OrderPayment>;

type CreditStatus = (typeof CREDIT_STATUSES)[number];

/**
 * An amount the merchant's ledger account is owed, written in the same
 * transaction as the payment state that causes it (an outbox row); a job and
 * a sweep carry it to wallet.CreditMerchant, idempotent on idempotency_key.
 */
export const OrderCredit = defineEntity({
  name: "OrderCredit",
  tableName: "payment_order_credits",
  properties: {
    id: p.uuid().primary(),
    orderId: p.uuid(),
    merchantId: p.uuid(),
    idempotencyKey: p.string().length(200),
    asset: p.string().length(32),
    amount: p.decimal("string").precision(38).scale(18),
    status: p.string().length(16).$type<CreditStatus>(),
    ...walletCallColumns(),
    walletTransactionId: p.string().length(100).nullable(),
    createdAt: p.datetime(),
    creditedAt: p.datetime().nullable(),
  },
});

export const orderEntities = [PaymentOrder, OrderPayment, OrderCredit];

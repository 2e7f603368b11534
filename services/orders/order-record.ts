import { formatAmount, formatAtScale } from "../platform/money.ts";
import type { OrderPaymentRow, PaymentOrderRow } from "./entities.ts";

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** A transfer as the merchant sees it; amounts at the asset's decimals. */
export function paymentRecord(payment: OrderPaymentRow, decimals: number) {
  return {
    txId: payment.txId,
    amount: formatAtScale(payment.amount, decimals),
    confirmations: payment.confirmations,
    late: payment.late,
    seenAt: payment.seenAt.toISOString(),
    updatedAt: payment.updatedAt.toISOString(),
  };
}

/**
 * The merchant-facing order: the REST body and the data of every
 * payment_order.* event (the order as it was right after the change).
 * Asset amounts are fixed-scale at the asset's decimals ("0.00166667"), so
 * the amount to send is exact and copyable; `amount` is as requested.
 */
export function orderRecord(order: PaymentOrderRow, payments: readonly OrderPaymentRow[]) {
  const d = order.decimals;
  return {
    id: order.id,
    object: "payment_order",
    externalId: order.externalId,
    externalCustomerId: order.externalCustomerId,
    asset: order.asset,
    network: order.network,
    address: order.address,
    amountToPay: formatAtScale(order.amountToPay, d),
    amount: formatAmount(order.requestedAmount),
    currency: order.requestedCurrency ?? null,
    rate: order.rate ?? null,
    rateAt: iso(order.rateAt),
    status: order.status,
    expiresAt: order.expiresAt.toISOString(),
    amountPaid: formatAtScale(order.amountPaid, d),
    overpaidAmount: formatAtScale(order.overpaidAmount, d),
    latePayment: order.latePayment,
    amountPaidLate: formatAtScale(order.amountPaidLate, d),
    underpaymentTolerancePercent: formatAmount(order.underpaymentTolerancePercent),
    requiredConfirmations: order.requiredConfirmations,
    payments: payments.map((p) => paymentRecord(p, d)),
    metadata: order.metadata,
    paidAt: iso(order.paidAt),
    expiredAt: iso(order.expiredAt),
    settledAt: iso(order.settledAt),
    createdAt: order.createdAt.toISOString(),
    updatedAt: order.updatedAt.toISOString(),
  };
}

export type OrderRecord = ReturnType<typeof orderRecord>;

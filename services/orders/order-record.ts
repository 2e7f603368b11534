import { formatAmount, formatAtScale } from "../platform/money.ts";
import { iso, isoOrNull } from "../platform/timestamps.ts";
import type { OrderPaymentRow, PaymentOrderRow } from "./entities.ts";

/** A transfer as the merchant sees it; amounts at the asset's decimals. */
function paymentRecord(payment: OrderPaymentRow, decimals: number) {
  return {
    txId: payment.txId,
    amount: formatAtScale(payment.amount, decimals),
    confirmations: payment.confirmations,
    late: payment.late,
    seenAt: iso(payment.seenAt),
    updatedAt: iso(payment.updatedAt),
  };
}

/**
 * The merchant-facing order: the REST body (the message's record_json) and
 * the data of every payment_order.* event (the order as it was right after the change).
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
    rateAt: isoOrNull(order.rateAt),
    status: order.status,
    expiresAt: iso(order.expiresAt),
    amountPaid: formatAtScale(order.amountPaid, d),
    overpaidAmount: formatAtScale(order.overpaidAmount, d),
    latePayment: order.latePayment,
    amountPaidLate: formatAtScale(order.amountPaidLate, d),
    amountRefunded: formatAtScale(order.amountRefunded ?? "0", d),
    underpaymentTolerancePercent: formatAmount(order.underpaymentTolerancePercent),
    requiredConfirmations: order.requiredConfirmations,
    payments: payments.map((p) => paymentRecord(p, d)),
    metadata: order.metadata,
    paidAt: isoOrNull(order.paidAt),
    expiredAt: isoOrNull(order.expiredAt),
    settledAt: isoOrNull(order.settledAt),
    createdAt: iso(order.createdAt),
    updatedAt: iso(order.updatedAt),
    version: order.version,
  };
}

/** The small status body (cheap to poll): the same values as the order record. */
export function orderStatusRecord(order: PaymentOrderRow) {
  const d = order.decimals;
  return {
    id: order.id,
    externalId: order.externalId,
    status: order.status,
    amountToPay: formatAtScale(order.amountToPay, d),
    amountPaid: formatAtScale(order.amountPaid, d),
    expiresAt: iso(order.expiresAt),
    updatedAt: iso(order.updatedAt),
    version: order.version,
  };
}

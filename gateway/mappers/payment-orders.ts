import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { DepositOutcome, type PaymentOrder, type PaymentOrderStatus } from "../../proto/gen/billing/orders/v1/orders_pb.ts";

const iso = (t: Timestamp | undefined) => (t ? timestampDate(t).toISOString() : null);

/** The REST payment order; the same shape as the data of payment_order.* events (orderRecord). */
export function paymentOrderBody(o: PaymentOrder) {
  return {
    id: o.id,
    object: "payment_order",
    externalId: o.externalId,
    externalCustomerId: o.externalCustomerId,
    asset: o.asset,
    network: o.network,
    address: o.address,
    amountToPay: o.amountToPay,
    amount: o.amount,
    currency: o.currency ?? null,
    rate: o.rate ?? null,
    rateAt: iso(o.rateAt),
    status: o.status,
    expiresAt: iso(o.expiresAt),
    amountPaid: o.amountPaid,
    overpaidAmount: o.overpaidAmount,
    latePayment: o.latePayment,
    amountPaidLate: o.amountPaidLate,
    underpaymentTolerancePercent: o.underpaymentTolerancePercent,
    requiredConfirmations: o.requiredConfirmations,
    payments: o.payments.map((p) => ({
      txId: p.txId,
      amount: p.amount,
      confirmations: p.confirmations,
      late: p.late,
      seenAt: iso(p.seenAt),
      updatedAt: iso(p.updatedAt),
    })),
    metadata: JSON.parse(o.metadataJson || "{}") as Record<string, unknown>,
    paidAt: iso(o.paidAt),
    expiredAt: iso(o.expiredAt),
    settledAt: iso(o.settledAt),
    createdAt: iso(o.createdAt),
    updatedAt: iso(o.updatedAt),
  };
}

export function paymentOrderStatusBody(s: PaymentOrderStatus) {
  return {
    id: s.id,
    externalId: s.externalId,
    status: s.status,
    amountToPay: s.amountToPay,
    amountPaid: s.amountPaid,
    expiresAt: iso(s.expiresAt),
    updatedAt: iso(s.updatedAt),
  };
}

const OUTCOME_NAMES: Record<DepositOutcome, string> = {
  [DepositOutcome.UNSPECIFIED]: "UNSPECIFIED",
  [DepositOutcome.RECORDED]: "RECORDED",
  [DepositOutcome.UPDATED]: "UPDATED",
  [DepositOutcome.DUPLICATE]: "DUPLICATE",
};

export const depositOutcomeName = (o: DepositOutcome): string => OUTCOME_NAMES[o] ?? "UNSPECIFIED";

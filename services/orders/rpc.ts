import type { ServiceImpl } from "@connectrpc/connect";
import { DepositOutcome, OrdersService } from "../../proto/gen/billing/orders/v1/orders_pb.ts";
import type { ServiceDeps } from "../platform/service-deps.ts";
import { useCaseContext } from "../platform/rpc/use-case-context.ts";
import { parseMetadataJson } from "../platform/metadata.ts";
import { toOptionalTimestamp, toTimestamp } from "../platform/timestamps.ts";
import { withRecordJson } from "../platform/rpc/record-json.ts";
import type { OrderPaymentRow, PaymentOrderRow } from "./entities.ts";
import { orderRecord, orderStatusRecord } from "./order-record.ts";
import type { OrderWithPayments } from "./order-store.ts";
import { createDepositAddresses } from "./addresses/deposit-addresses.ts";
import { walletPort } from "./wallet-port.ts";
import { createPaymentOrder } from "./create-payment-order.ts";
import { getPaymentOrder, getPaymentOrderByExternalId, getPaymentOrderStatus } from "./get-payment-order.ts";
import { listPaymentOrders } from "./list-payment-orders.ts";
import { reportDeposit, type DepositOutcome as Outcome } from "./report-deposit.ts";
import { expireDueOrders } from "./expire-payment-order.ts";
import { scheduleCredits, scheduleExpiry } from "./order-queue.ts";

const OUTCOME_TO_PROTO: Record<Outcome, DepositOutcome> = {
  RECORDED: DepositOutcome.RECORDED,
  UPDATED: DepositOutcome.UPDATED,
  DUPLICATE: DepositOutcome.DUPLICATE,
};

/** The typed message is the record (order-record.ts) field by field, and carries it whole for the gateway. */
function orderMessage({ order, payments }: { order: PaymentOrderRow; payments: readonly OrderPaymentRow[] }) {
  const r = orderRecord(order, payments);
  return withRecordJson(
    {
      id: r.id,
      merchantId: order.merchantId,
      externalId: r.externalId,
      externalCustomerId: r.externalCustomerId,
      asset: r.asset,
      network: r.network,
      address: r.address,
      amountToPay: r.amountToPay,
      amount: r.amount,
      currency: r.currency ?? undefined,
      rate: r.rate ?? undefined,
      rateAt: toOptionalTimestamp(r.rateAt),
      status: r.status,
      expiresAt: toTimestamp(r.expiresAt),
      amountPaid: r.amountPaid,
      overpaidAmount: r.overpaidAmount,
      latePayment: r.latePayment,
      amountPaidLate: r.amountPaidLate,
      underpaymentTolerancePercent: r.underpaymentTolerancePercent,
      requiredConfirmations: r.requiredConfirmations,
      decimals: order.decimals,
      payments: r.payments.map((p) => ({ ...p, seenAt: toTimestamp(p.seenAt), updatedAt: toTimestamp(p.updatedAt) })),
      metadataJson: JSON.stringify(r.metadata),
      paidAt: toOptionalTimestamp(r.paidAt),
      expiredAt: toOptionalTimestamp(r.expiredAt),
      settledAt: toOptionalTimestamp(r.settledAt),
      createdAt: toTimestamp(r.createdAt),
      updatedAt: toTimestamp(r.updatedAt),
    },
    r,
  );
}

function orderStatusMessage(order: PaymentOrderRow) {
  const r = orderStatusRecord(order);
  return withRecordJson({ ...r, expiresAt: toTimestamp(r.expiresAt), updatedAt: toTimestamp(r.updatedAt) }, r);
}

export function ordersService(deps: ServiceDeps): ServiceImpl<typeof OrdersService> {
  // Parsing the keys here makes a bad XPUB_* stop the start, naming the network.
  const addresses = createDepositAddresses(deps.config.depositXpubs);
  const wallet = walletPort(deps);
  const withPayments = (found: OrderWithPayments) => ({ order: orderMessage(found) });
  return {
    async createPaymentOrder(req, call) {
      const res = await createPaymentOrder(
        useCaseContext(call),
        { wallet, addresses },
        {
          merchantId: req.merchantId,
          externalId: req.externalId,
          externalCustomerId: req.externalCustomerId,
          asset: req.asset,
          amount: req.amount,
          currency: req.currency,
          expiresInMinutes: req.expiresInMinutes,
          metadata: parseMetadataJson(req.metadataJson),
          underpaymentTolerancePercent: req.underpaymentTolerancePercent,
        },
      );
      if (res.created) await scheduleExpiry(deps.queues, deps.clock, res.order);
      return { order: orderMessage(res), created: res.created };
    },
    async getPaymentOrder(req, call) {
      return withPayments(await getPaymentOrder(useCaseContext(call), req.merchantId, req.id));
    },
    async getPaymentOrderByExternalId(req, call) {
      return withPayments(await getPaymentOrderByExternalId(useCaseContext(call), req.merchantId, req.externalId));
    },
    async getPaymentOrderStatus(req, call) {
      return { status: orderStatusMessage(await getPaymentOrderStatus(useCaseContext(call), req.merchantId, req.id)) };
    },
    async listPaymentOrders(req, call) {
      const page = await listPaymentOrders(useCaseContext(call), {
        merchantId: req.merchantId,
        limit: req.limit,
        cursor: req.cursor,
        status: req.status,
        externalCustomerId: req.externalCustomerId,
      });
      return { orders: page.items.map(orderMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async reportDeposit(req, call) {
      const res = await reportDeposit(useCaseContext(call), {
        address: req.address,
        asset: req.asset,
        amount: req.amount,
        txId: req.txId,
        confirmations: req.confirmations,
      });
      await scheduleCredits(deps.queues, res.creditIds);
      return { outcome: OUTCOME_TO_PROTO[res.outcome], order: orderMessage(res) };
    },
    async expireOrders(_req, call) {
      await deps.clock.sync();
      const res = await expireDueOrders(useCaseContext(call));
      await scheduleCredits(deps.queues, res.creditIds);
      return { expired: res.count };
    },
  };
}

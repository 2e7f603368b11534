import type { ServiceImpl } from "@connectrpc/connect";
import { PayoutsService } from "../../proto/gen/billing/payouts/v1/payouts_pb.ts";
import type { ServiceDeps } from "../platform/service-deps.ts";
import { useCaseContext } from "../platform/rpc/use-case-context.ts";
import { parseMetadataJson } from "../platform/metadata.ts";
import { withRecordJson } from "../platform/rpc/record-json.ts";
import { Payout as PayoutEntity, type PayoutDestinationRow, type PayoutRow } from "./entities.ts";
import { formatAmount } from "../platform/money.ts";
import { adminPayoutRecord, destinationRecord, payoutRecord } from "./payout-records.ts";
import { activateDestination, createDestination, getDestination, listDestinations, removeDestination } from "./destinations.ts";
import { createPayout } from "./create-payout.ts";
import { approvePayout, cancelPayout, rejectPayout, sandboxFailPayout } from "./payout-actions.ts";
import { getPayout, listPayouts, pendingBalance } from "./payout-queries.ts";
import { scheduleSubmit } from "./payout-queue.ts";
import { processPayoutPorts } from "./process-ports.ts";
import type { OrderRefundRow } from "./entities.ts";
import { createOrderRefund } from "./order-refunds/create-order-refund.ts";
import { listOrderRefunds } from "./order-refunds/list-order-refunds.ts";
import { claimOrderRefund, readClaim } from "./order-refunds/claim-order-refund.ts";
import { orderRefundRecord } from "./order-refunds/order-refund-record.ts";

/**
 * Maps messages to the payouts' use cases. In live mode without
 * PAYOUT_SIGNER_URL payouts are unavailable: said once here, when the
 * service starts, and answered 503 PAYOUTS_UNAVAILABLE by every create.
 */
export function payoutsService(deps: ServiceDeps): ServiceImpl<typeof PayoutsService> {
  const ports = processPayoutPorts(deps);
  if (!ports.chain) deps.logger.warn("payouts are unavailable: live mode without PAYOUT_SIGNER_URL (POST /api/v1/payouts answers 503 PAYOUTS_UNAVAILABLE)");
  else deps.logger.info({ chain: ports.chain.name, addressChain: ports.addressChain }, "payouts go to the chain through this port");
  const destinationMessage = (d: PayoutDestinationRow) => {
    const r = destinationRecord(d, deps.clock.now());
    return withRecordJson({ id: r.id, merchantId: d.merchantId, asset: r.asset, network: r.network, address: r.address, status: r.status }, r);
  };
  const payoutMessage = (p: PayoutRow, admin = false) => {
    const r = admin ? adminPayoutRecord(p) : payoutRecord(p);
    return withRecordJson(
      { id: r.id, merchantId: p.merchantId, status: r.status, asset: r.asset, amount: r.amount, fee: r.fee, txHash: r.txHash ?? undefined },
      r,
    );
  };
  /** A PENDING payout is handed to the chain by a job at once (the sweep if the job is lost). */
  const afterCommit = async (p: PayoutRow) => {
    if (p.status === "PENDING") await scheduleSubmit(deps.queues, p.id);
    return { payout: payoutMessage(p) };
  };
  const refundMessage = (r: OrderRefundRow, fee: string | null) => {
    const rec = orderRefundRecord(r, ports.claimLinks, fee);
    return withRecordJson({ id: r.id, merchantId: r.merchantId, status: r.status, paymentOrderId: r.paymentOrderId, payoutId: rec.payoutId ?? undefined }, rec);
  };
  /** The fees of the refunds' payouts, read in one query (a page of refunds is one round trip, not one per refund). */
  const feesOf = async (refunds: readonly OrderRefundRow[]): Promise<Map<string, string>> => {
    const ids = [...new Set(refunds.map((r) => r.payoutId))];
    const payouts = ids.length === 0 ? [] : await deps.orm.em.fork().find(PayoutEntity, { id: { $in: ids } });
    const fees = new Map(payouts.map((p) => [p.id, p.fee]));
    const missing = ids.find((id) => !fees.has(id));
    if (missing !== undefined) throw new Error(`payout ${missing} of an order refund not found`);
    return fees;
  };
  const getPayoutRow = (id: string) => deps.orm.em.fork().findOneOrFail(PayoutEntity, { id });
  const claimMessage = async (found: { refund: OrderRefundRow; payout: PayoutRow } | undefined) => {
    if (!found) return { found: false, state: "", merchantName: "", asset: "", network: "", amount: "", expiresAt: "" };
    const { refund, payout } = found;
    return {
      found: true,
      state: refund.status,
      merchantName: await ports.merchantName(refund.merchantId),
      asset: refund.asset,
      network: payout.network,
      amount: formatAmount(refund.amount),
      expiresAt: refund.claimExpiresAt ? refund.claimExpiresAt.toISOString() : "",
      address: refund.address ?? undefined,
    };
  };
  return {
    async createOrderRefund(req, call) {
      await deps.clock.sync();
      const refund = await createOrderRefund(useCaseContext(call), ports, {
        merchantId: req.merchantId,
        paymentOrderId: req.paymentOrderId,
        amount: req.amount,
        address: req.address,
        expiresInMinutes: req.expiresInMinutes,
        idempotencyKey: req.idempotencyKey,
      });
      const payout = await getPayoutRow(refund.payoutId);
      if (payout.status === "PENDING") await scheduleSubmit(deps.queues, payout.id);
      return { refund: refundMessage(refund, payout.fee) };
    },
    async listOrderRefunds(req, call) {
      const page = await listOrderRefunds(useCaseContext(call), ports, {
        merchantId: req.merchantId,
        paymentOrderId: req.paymentOrderId,
        limit: req.limit,
        cursor: req.cursor,
      });
      const fees = await feesOf(page.items);
      const refunds = page.items.map((r) => refundMessage(r, fees.get(r.payoutId)!));
      return { refunds, hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async getRefundClaim(req, call) {
      await deps.clock.sync();
      return claimMessage(await readClaim(useCaseContext(call), ports, req.token));
    },
    async claimOrderRefund(req, call) {
      await deps.clock.sync();
      const claimed = await claimOrderRefund(useCaseContext(call), ports, req.token, req.address);
      if (claimed) await scheduleSubmit(deps.queues, claimed.payout.id);
      return claimMessage(claimed);
    },
    async createPayoutDestination(req, call) {
      const d = await createDestination(useCaseContext(call), ports, { merchantId: req.merchantId, asset: req.asset, address: req.address, label: req.label });
      return { destination: destinationMessage(d) };
    },
    async getPayoutDestination(req, call) {
      return { destination: destinationMessage(await getDestination(useCaseContext(call), req.merchantId, req.id)) };
    },
    async listPayoutDestinations(req, call) {
      const page = await listDestinations(useCaseContext(call), {
        merchantId: req.merchantId,
        status: req.status,
        asset: req.asset,
        limit: req.limit,
        cursor: req.cursor,
      });
      return { destinations: page.items.map(destinationMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async activatePayoutDestination(req, call) {
      return { destination: destinationMessage(await activateDestination(useCaseContext(call), req.merchantId, req.id)) };
    },
    async removePayoutDestination(req, call) {
      return { destination: destinationMessage(await removeDestination(useCaseContext(call), req.merchantId, req.id)) };
    },
    async createPayout(req, call) {
      await deps.clock.sync();
      const payout = await createPayout(useCaseContext(call), ports, {
        merchantId: req.merchantId,
        destinationId: req.destinationId,
        amount: req.amount,
        metadata: parseMetadataJson(req.metadataJson || "{}"),
        idempotencyKey: req.idempotencyKey,
      });
      return afterCommit(payout);
    },
    async getPayout(req, call) {
      return { payout: payoutMessage(await getPayout(useCaseContext(call), req.merchantId, req.id)) };
    },
    async listPayouts(req, call) {
      const page = await listPayouts(useCaseContext(call), {
        merchantId: req.merchantId,
        status: req.status,
        destinationId: req.destinationId,
        asset: req.asset,
        limit: req.limit,
        cursor: req.cursor,
      });
      return { payouts: page.items.map((p) => payoutMessage(p)), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async cancelPayout(req, call) {
      return { payout: payoutMessage(await cancelPayout(useCaseContext(call), ports, req.merchantId, req.id)) };
    },
    async getPendingBalance(req, call) {
      return { pending: await pendingBalance(useCaseContext(call), req.merchantId) };
    },
    async adminListPayouts(req, call) {
      const page = await listPayouts(useCaseContext(call), { merchantId: req.filterMerchantId, status: req.status, limit: req.limit, cursor: req.cursor });
      return { payouts: page.items.map((p) => payoutMessage(p, true)), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async approvePayout(req, call) {
      return { payout: payoutMessage(await approvePayout(useCaseContext(call), ports, req.id), true) };
    },
    async rejectPayout(req, call) {
      return { payout: payoutMessage(await rejectPayout(useCaseContext(call), ports, req.id), true) };
    },
    async sandboxFailPayout(req, call) {
      await deps.clock.sync();
      return { payout: payoutMessage(await sandboxFailPayout(useCaseContext(call), ports, deps.config.sandbox, req.id, req.reason), true) };
    },
  };
}

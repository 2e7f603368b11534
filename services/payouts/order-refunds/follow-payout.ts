import { LockMode } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../../platform/clock.ts";
import { recordEvent } from "../../events/record-event.ts";
import type { EventType } from "../../events/contract.ts";
import { OrderRefund, type OrderRefundRow, type PayoutRow } from "../entities.ts";
import type { ClaimLinks } from "./claim-token.ts";
import { orderRefundRecord } from "./order-refund-record.ts";
import { orderRefundMachine, type OrderRefundEvent } from "./order-refund-status.ts";

const EVENT_OF: Partial<Record<OrderRefundEvent, EventType>> = {
  reserved_awaiting_address: "payment_order.refund_created",
  reserved_with_address: "payment_order.refund_created",
  claim_expired: "payment_order.refund_expired",
  payout_paid: "payment_order.refunded",
  payout_failed: "payment_order.refund_failed",
};

/**
 * Moves an order refund with its payout, in the payout's transaction (lock
 * order: the payout, then its refund), and records its event there too.
 * A payout that is not an order refund's is left alone.
 */
export async function followPayout(
  em: EntityManager,
  clock: Clock,
  links: ClaimLinks,
  payout: PayoutRow,
  event: OrderRefundEvent,
): Promise<OrderRefundRow | null> {
  if (payout.source !== "ORDER_REFUND" || !payout.sourceId) return null;
  const refund = await em.findOneOrFail(OrderRefund, { id: payout.sourceId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  refund.status = orderRefundMachine.next(refund.status, event);
  refund.address = payout.address ?? null;
  refund.updatedAt = clock.now();
  // Refused: nothing moved and nothing is shown; the merchant may try again with the same Idempotency-Key.
  if (refund.status === "REFUSED") refund.idempotencyKey = null;
  const type = EVENT_OF[event];
  if (type) recordEvent(em, clock, { merchantId: refund.merchantId, type, data: orderRefundRecord(refund, links, payout.fee) });
  return refund;
}

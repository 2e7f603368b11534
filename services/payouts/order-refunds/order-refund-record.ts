import { formatAmount } from "../../platform/money.ts";
import { iso, isoOrNull } from "../../platform/timestamps.ts";
import type { OrderRefundRow } from "../entities.ts";
import type { ClaimLinks } from "./claim-token.ts";

/**
 * The merchant-facing order refund (REST bodies and payment_order.refund_*
 * event data). `claimUrl` only while the claim is open; `payoutId` once the
 * payout has an address (a payout the merchant can read).
 */
export function orderRefundRecord(r: OrderRefundRow, links: ClaimLinks, fee: string | null) {
  return {
    id: r.id,
    object: "order_refund" as const,
    paymentOrderId: r.paymentOrderId,
    asset: r.asset,
    amount: formatAmount(r.amount),
    fee: fee === null ? null : formatAmount(fee),
    status: r.status,
    address: r.address ?? null,
    claimUrl: r.status === "AWAITING_ADDRESS" ? links.url(r.id) : null,
    claimExpiresAt: r.status === "AWAITING_ADDRESS" ? isoOrNull(r.claimExpiresAt) : null,
    payoutId: r.address ? r.payoutId : null,
    createdAt: iso(r.createdAt),
  };
}

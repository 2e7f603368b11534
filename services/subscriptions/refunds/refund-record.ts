import { formatAmount } from "../../platform/money.ts";
import type { RefundRow } from "./refund-entities.ts";

/** The merchant-facing refund record: REST bodies (through the RPC message) and event data share it. */
export function refundRecord(r: RefundRow) {
  return {
    id: r.id,
    object: "refund" as const,
    chargeId: r.chargeId,
    subscriptionId: r.subscriptionId,
    amount: formatAmount(r.amount),
    currency: r.currency,
    asset: r.asset,
    assetAmount: formatAmount(r.assetAmount),
    status: r.status,
    reason: r.reason ?? null,
    metadata: r.metadata,
    createdAt: r.createdAt.toISOString(),
  };
}

export type RefundRecord = ReturnType<typeof refundRecord>;

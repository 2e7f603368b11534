import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Refund } from "../../proto/gen/billing/subscriptions/v1/refunds_pb.ts";

/** The REST refund record: the same shape as the service's event data (refundRecord). */
export function refundBody(r: Refund) {
  return {
    id: r.id,
    object: "refund",
    chargeId: r.chargeId,
    subscriptionId: r.subscriptionId,
    amount: r.amount,
    currency: r.currency,
    asset: r.asset,
    assetAmount: r.assetAmount,
    status: r.status,
    reason: r.reason ?? null,
    metadata: JSON.parse(r.metadataJson || "{}") as Record<string, unknown>,
    createdAt: timestampDate(r.createdAt!).toISOString(),
  };
}

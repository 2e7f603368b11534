import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { SubscriptionCharge } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";

const iso = (t: Timestamp | undefined): string | null => (t ? timestampDate(t).toISOString() : null);

/** The REST charge record: the same shape as the service's event data (chargeRecord). */
export function chargeBody(c: SubscriptionCharge) {
  return {
    id: c.id,
    object: "subscription_charge",
    subscriptionId: c.subscriptionId,
    periodIndex: c.periodIndex,
    periodStart: iso(c.periodStart),
    periodEnd: iso(c.periodEnd),
    amount: c.amount,
    currency: c.currency,
    asset: c.asset,
    assetAmount: c.assetAmount ?? null,
    rate: c.rate ?? null,
    status: c.status,
    failureReason: c.failureReason ?? null,
    attempt: c.attempt,
    walletTransactionId: c.walletTransactionId ?? null,
    createdAt: iso(c.createdAt),
    amountRefunded: c.amountRefunded || "0",
    assetAmountRefunded: c.assetAmountRefunded || "0",
  };
}

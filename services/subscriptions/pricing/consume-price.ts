import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../../platform/clock.ts";
import { amount, formatAmount, isZero, max, sub as minus, zero } from "../../platform/money.ts";
import { touch } from "../../platform/record-version.ts";
import { recordEvent } from "../../events/record-event.ts";
import type { AuthorizationRow, ChargeRow, SubscriptionRow } from "../entities.ts";
import { discountRecord, subscriptionRecord } from "../subscription-record.ts";
import { currentAuthorization } from "../subscription-store.ts";

type DiscountEndReason = "PERIODS_USED" | "REMOVED" | "REPLACED";

/**
 * What a SUCCEEDED charge used of its price moves on, in the settling
 * transaction (subscription locked): the credit it spent leaves the balance,
 * and a discount counted in periods has one period less; the last one ends
 * it (subscription.discount_ended, reason PERIODS_USED). A failed charge uses
 * nothing: its retry is priced the same.
 */
export async function consumePrice(
  em: EntityManager,
  clock: Clock,
  sub: SubscriptionRow,
  charge: ChargeRow,
  authorization?: AuthorizationRow | null,
): Promise<void> {
  if (charge.status !== "SUCCEEDED") return;
  const now = clock.now();
  const credit = amount(charge.creditApplied ?? "0");
  if (!isZero(credit)) {
    sub.creditBalance = formatAmount(max(zero(), minus(amount(sub.creditBalance ?? "0"), credit)));
    touch(sub, now);
  }
  if (!charge.couponId || charge.couponId !== sub.discountCouponId || sub.discountPeriodsRemaining == null) return;
  touch(sub, now);
  if (sub.discountPeriodsRemaining > 1) {
    sub.discountPeriodsRemaining -= 1;
    return;
  }
  await endDiscount(em, clock, sub, "PERIODS_USED", authorization);
}

/** Clears the discount and records subscription.discount_ended (call under the subscription lock). */
export async function endDiscount(
  em: EntityManager,
  clock: Clock,
  sub: SubscriptionRow,
  reason: DiscountEndReason,
  authorization?: AuthorizationRow | null,
): Promise<void> {
  const ended = discountRecord(sub);
  if (!ended) return;
  sub.discountCouponId = null;
  sub.discountPromotionCodeId = null;
  sub.discountPromotionCode = null;
  sub.discountPercentOff = null;
  sub.discountAmountOff = null;
  sub.discountCurrency = null;
  sub.discountStart = null;
  sub.discountPeriodsRemaining = null;
  touch(sub, clock.now());
  const auth = authorization === undefined ? await currentAuthorization(em, sub.id) : authorization;
  recordEvent(em, clock, {
    merchantId: sub.merchantId,
    type: "subscription.discount_ended",
    data: { ...subscriptionRecord(sub, auth), endedDiscount: ended, reason },
  });
}

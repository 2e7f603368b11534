import type { UseCaseContext } from "../../platform/use-case.ts";
import { recordEvent } from "../../events/record-event.ts";
import { Subscription, SubscriptionAuthorization, type AuthorizationRow, type SubscriptionRow } from "../entities.ts";
import { subscriptionRecord } from "../subscription-record.ts";
import { redeemDiscount, setDiscount, type DiscountRequest } from "./redeem-discount.ts";

/**
 * A new subscription with a discount: the redemption (conditional updates of
 * the coupon's and the code's counts), the subscription, its authorization
 * and the events subscription.created and subscription.discount_applied commit
 * together — a refused redemption creates nothing, a failed insert redeems
 * nothing. (Creates without a discount keep their one-statement path.)
 */
export async function insertWithDiscount(
  ctx: UseCaseContext,
  rows: { subscription: SubscriptionRow; authorization: AuthorizationRow },
  request: DiscountRequest,
  plan: { id: string; currency: string },
  callSignal?: AbortSignal,
): Promise<void> {
  await ctx.em.fork().transactional(async (em) => {
    const now = ctx.clock.now();
    const redeemed = await redeemDiscount(em, now, rows.subscription.merchantId, request, plan);
    setDiscount(rows.subscription, redeemed, now);
    em.create(Subscription, rows.subscription);
    // The entities declare no relation: the subscription is written first for the authorization's foreign key.
    await em.flush();
    em.create(SubscriptionAuthorization, rows.authorization);
    const record = subscriptionRecord(rows.subscription, rows.authorization);
    recordEvent(em, ctx.clock, { merchantId: rows.subscription.merchantId, type: "subscription.created", data: record });
    recordEvent(em, ctx.clock, { merchantId: rows.subscription.merchantId, type: "subscription.discount_applied", data: record });
    // Written, not yet committed: past the caller's deadline (it answered 504) this rolls back, so what can still
    // commit after the deadline is the COMMIT alone, the one statement gateway/idempotency.ts outcomeUnknownMs allows for.
    await em.flush();
    callSignal?.throwIfAborted();
  });
}

import type { UseCaseContext } from "../../platform/use-case.ts";
import { conflict } from "../../platform/errors.ts";
import { touch } from "../../platform/record-version.ts";
import { recordEvent } from "../../events/record-event.ts";
import type { AuthorizationRow, SubscriptionRow } from "../entities.ts";
import { currentAuthorization, findSubscription, lockSubscription } from "../subscription-store.ts";
import { subscriptionRecord } from "../subscription-record.ts";
import { afterChargeSettles, refuseUnderCharge } from "../charges/wait-for-charges.ts";
import { fetchPlanPricing, type SubscriptionPorts } from "../ports.ts";
import { redeemDiscount, setDiscount, type DiscountRequest } from "./redeem-discount.ts";
import { endDiscount } from "./consume-price.ts";

export interface DiscountedSubscription {
  subscription: SubscriptionRow;
  authorization: AuthorizationRow | null;
}

/** A discount may be applied to or removed from a subscription that is not over. */
const ENDED = ["CANCELLED", "EXPIRED"];

/**
 * POST /subscriptions/{id}/discount: redeems the coupon (or code) and makes it
 * the subscription's discount, replacing the one it had (discount_ended with
 * reason REPLACED, then discount_applied), in one transaction under the
 * subscription lock. A charge in flight is settled first (as pause and cancel
 * do), so no charge is priced with one discount and settled with another.
 */
export async function applyDiscount(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  merchantId: string,
  id: string,
  request: DiscountRequest,
): Promise<DiscountedSubscription> {
  const known = await findSubscription(ctx.em.fork(), id, merchantId);
  // The plan's currency and id decide what applies; read before the lock (no RPC in a transaction), checked again under it.
  const plan = await fetchPlanPricing(ports, merchantId, known.planId);
  return afterChargeSettles(ctx, ports, () =>
    ctx.em.fork().transactional(async (em) => {
      const sub = await lockSubscription(em, id, merchantId);
      refuseEnded(sub);
      await refuseUnderCharge(em, sub.id);
      if (sub.planId !== plan.id) throw conflict("PLAN_CHANGED", "the subscription's plan changed meanwhile; try again");
      const now = ctx.clock.now();
      const redeemed = await redeemDiscount(em, now, merchantId, request, plan);
      const authorization = await currentAuthorization(em, sub.id);
      await endDiscount(em, ctx.clock, sub, "REPLACED", authorization);
      setDiscount(sub, redeemed, now);
      touch(sub, now);
      recordEvent(em, ctx.clock, { merchantId, type: "subscription.discount_applied", data: subscriptionRecord(sub, authorization) });
      return { subscription: sub, authorization };
    }),
  );
}

/** DELETE /subscriptions/{id}/discount: ends the discount now (discount_ended, reason REMOVED); without one, the subscription unchanged. */
export async function removeDiscount(ctx: UseCaseContext, ports: SubscriptionPorts, merchantId: string, id: string): Promise<DiscountedSubscription> {
  return afterChargeSettles(ctx, ports, () =>
    ctx.em.fork().transactional(async (em) => {
      const sub = await lockSubscription(em, id, merchantId);
      await refuseUnderCharge(em, sub.id);
      const authorization = await currentAuthorization(em, sub.id);
      await endDiscount(em, ctx.clock, sub, "REMOVED", authorization);
      return { subscription: sub, authorization };
    }),
  );
}

function refuseEnded(sub: SubscriptionRow): void {
  if (ENDED.includes(sub.status)) throw conflict("SUBSCRIPTION_NOT_CHANGEABLE", `a subscription in status ${sub.status} takes no discount`);
}

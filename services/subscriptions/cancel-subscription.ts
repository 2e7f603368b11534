import type { UseCaseContext } from "../platform/use-case.ts";
import { transitionSubscription } from "./transition-subscription.ts";
import type { SubscriptionOwner } from "./subscription-store.ts";
import { afterChargeSettles, refuseUnderCharge } from "./charges/wait-for-charges.ts";
import type { SubscriptionPorts } from "./ports.ts";
import { recordCancellation } from "./subscription-moves.ts";
import type { CancellationReason } from "./contract.ts";
import { cancelChangeSessionsOf } from "./change-sessions/cancel-change-sessions.ts";

/**
 * Any non-terminal status → CANCELLED, at once: nothing is charged after it.
 * A charge in flight (a first payment, a renewal, a plan change's immediate
 * charge) is never cancelled under (its money could move after the cancel):
 * it is settled first (waiting briefly while its holder finishes), and the
 * cancel then applies to whatever status that left (ACTIVE if it was paid).
 */
export async function cancelSubscription(ctx: UseCaseContext, ports: SubscriptionPorts, merchantId: string, id: string) {
  return cancelSubscriptionBy(ctx, ports, { merchantId }, id, "MERCHANT_CANCELLED");
}

/** The cancel itself, for the merchant or (cancel-subscription-for-customer.ts) the customer. */
export async function cancelSubscriptionBy(
  ctx: UseCaseContext,
  ports: SubscriptionPorts,
  owner: SubscriptionOwner,
  id: string,
  reason: Extract<CancellationReason, "MERCHANT_CANCELLED" | "CUSTOMER_CANCELLED">,
) {
  return afterChargeSettles(ctx, ports, () =>
    transitionSubscription(ctx, {
      ...owner,
      id,
      event: "cancel",
      eventType: "subscription.cancelled",
      async guard(em, sub) {
        await refuseUnderCharge(em, sub.id);
      },
      apply(sub, _from, now, authorization) {
        recordCancellation(sub, now, reason, authorization);
      },
      async alsoInTransaction(em, sub, now) {
        // A scheduled plan change (or one awaiting approval) ends with the subscription.
        await cancelChangeSessionsOf(em, ctx.clock, sub.id, now);
      },
    }),
  );
}

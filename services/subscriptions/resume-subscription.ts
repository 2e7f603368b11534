import type { UseCaseContext } from "../platform/use-case.ts";
import { transitionSubscription } from "./transition-subscription.ts";

/**
 * PAUSED → the status it was paused from. Billing dates are left as they
 * were; what happens to periods that fell due while paused is recurring
 * billing's rule (README "Recurring billing").
 */
export function resumeSubscription(ctx: UseCaseContext, merchantId: string, id: string) {
  return transitionSubscription(ctx, {
    merchantId,
    id,
    event: "resume",
    eventType: "subscription.resumed",
    apply(sub) {
      sub.pausedFromStatus = null;
      sub.pausedAt = null;
    },
  });
}

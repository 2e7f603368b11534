import type { UseCaseContext } from "../platform/use-case.ts";
import { transitionSubscription } from "./transition-subscription.ts";
import type { SubscriptionPorts } from "./ports.ts";
import { afterChargeSettles, refuseUnderCharge } from "./charges/wait-for-charges.ts";

/**
 * ACTIVE/TRIALING → PAUSED; remembers where it came from for resume. Nothing
 * is charged while paused. A renewal (or plan-change) charge in flight is
 * settled first, so its money and its `subscription.renewed` land before the pause.
 */
export function pauseSubscription(ctx: UseCaseContext, ports: SubscriptionPorts, merchantId: string, id: string) {
  return afterChargeSettles(ctx, ports, () =>
    transitionSubscription(ctx, {
      merchantId,
      id,
      event: "pause",
      eventType: "subscription.paused",
      async guard(em, sub) {
        await refuseUnderCharge(em, sub.id);
      },
      apply(sub, from, now) {
        sub.pausedFromStatus = from;
        sub.pausedAt = now;
      },
    }),
  );
}

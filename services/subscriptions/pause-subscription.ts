import type { UseCaseContext } from "../platform/use-case.ts";
import { transitionSubscription } from "./transition-subscription.ts";

/** ACTIVE/TRIALING → PAUSED; remembers where it came from for resume. Nothing is charged while paused. */
export function pauseSubscription(ctx: UseCaseContext, merchantId: string, id: string) {
  return transitionSubscription(ctx, {
    merchantId,
    id,
    event: "pause",
    eventType: "subscription.paused",
    apply(sub, from, now) {
      sub.pausedFromStatus = from;
      sub.pausedAt = now;
    },
  });
}

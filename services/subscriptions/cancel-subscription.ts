import { setTimeout as sleep } from "node:timers/promises";
import type { UseCaseContext } from "../platform/use-case.ts";
import { transitionSubscription } from "./transition-subscription.ts";
import { pendingFirstCharge, type SubscriptionOwner } from "./subscription-store.ts";
import { settleCharge } from "./charges/settle-charge.ts";
import { paymentInProgress } from "./charges/lease.ts";
import type { SubscriptionPorts } from "./ports.ts";
import { pendingChangeCharge } from "./change-sessions/change-session-store.ts";
import { cancelChangeSessionsOf } from "./change-sessions/cancel-change-sessions.ts";
import { pendingRenewalCharge } from "./renewals/pending-renewal-charge.ts";

class FirstPaymentInFlight extends Error {
  readonly chargeId: string;
  constructor(chargeId: string) {
    super("first payment in flight");
    this.chargeId = chargeId;
  }
}

const WAIT_FOR_PAYMENT_MS = 5_000;

/**
 * Any non-terminal status → CANCELLED, at once: nothing is charged after it.
 * A subscription awaiting approval whose first payment is in flight is not
 * cancelled under it (the money could move after the cancel): the payment is
 * settled first (waiting briefly while its owner finishes), and the cancel
 * then applies to whatever status that left (ACTIVE if it was paid).
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
  reason: "MERCHANT_CANCELLED" | "CUSTOMER_CANCELLED",
) {
  const deadline = Date.now() + WAIT_FOR_PAYMENT_MS;
  for (;;) {
    try {
      return await transitionSubscription(ctx, {
        ...owner,
        id,
        event: "cancel",
        eventType: "subscription.cancelled",
        async guard(em, sub) {
          // A plan change's immediate charge in flight is settled first too (it may apply the change).
          // So is a renewal in flight: cancelling under it could take a period's money after the cancel.
          const pending =
            sub.status === "PENDING_APPROVAL"
              ? await pendingFirstCharge(em, sub.id)
              : ((await pendingChangeCharge(em, sub.id)) ?? (await pendingRenewalCharge(em, sub.id)));
          if (pending) throw new FirstPaymentInFlight(pending.id);
        },
        apply(sub, _from, now, authorization) {
          sub.cancellationReason = reason;
          sub.cancelledAt = now;
          sub.pausedFromStatus = null;
          sub.nextBillingAt = null;
          // The link stops working; the expiry sweep no longer considers it.
          if (authorization?.status === "PENDING") authorization.status = "CANCELLED";
        },
        async alsoInTransaction(em, sub, now) {
          // A scheduled plan change (or one awaiting approval) ends with the subscription.
          await cancelChangeSessionsOf(em, ctx.clock, sub.id, now);
        },
      });
    } catch (err) {
      if (!(err instanceof FirstPaymentInFlight)) throw err;
      const settled = await settleCharge({ em: ctx.em.fork(), clock: ctx.clock }, ports, err.chargeId, false);
      if (settled.state === "in_progress") {
        // Wall time on purpose: this bounds how long the request waits, it is not business time.
        if (Date.now() > deadline) {
          throw paymentInProgress("this subscription");
        }
        await sleep(100);
      }
    }
  }
}

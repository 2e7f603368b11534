import type { SubscriptionRow } from "../entities.ts";
import type { FailureReason } from "../charges/open-charge.ts";
import type { ASSET_AMOUNT_TOO_LARGE } from "../contract.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";
import { CHANGEABLE_STATUSES } from "./change-session-store.ts";

/** Why an approval was refused (the hosted page shows the message; the RPC carries the reason). */
export type ChangeRefusal = FailureReason | "SUBSCRIPTION_NOT_CHANGEABLE" | "PLAN_CHANGED" | "CONVERSION_UNAVAILABLE" | typeof ASSET_AMOUNT_TOO_LARGE;

/**
 * May this session still change this subscription as it is now? The session
 * was priced from the plan it names as current, for a subscription that could
 * change plan. Asked under the subscription lock by the approval, and again by
 * the settle of an immediate charge (apply-paid-change.ts), since a scheduled
 * change, a failed renewal or dunning may have moved the subscription between.
 */
export function changeableRefusal(session: ChangeSessionRow, sub: SubscriptionRow): { refusal: ChangeRefusal; message: string } | undefined {
  if (!CHANGEABLE_STATUSES.includes(sub.status)) {
    return {
      refusal: "SUBSCRIPTION_NOT_CHANGEABLE",
      message: `This subscription is ${sub.status.toLowerCase().replace("_", " ")}, so its plan cannot change now.`,
    };
  }
  if (sub.planId !== session.currentPlanId) {
    return { refusal: "PLAN_CHANGED", message: "The subscription's plan has changed since this request was made. Ask the merchant for a new link." };
  }
  return undefined;
}

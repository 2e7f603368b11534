import { DomainError } from "../platform/errors.ts";
import type { DeliveryStatus } from "./webhook-entities.ts";

/**
 * The webhook delivery status machine: `from → event → to`.
 * - succeed: a 2xx answer within the timeout.
 * - retry: a failed attempt with retries left (stays PENDING, due later).
 * - exhaust: a failed attempt after the last retry.
 * - gone: the receiver answered 410 (the endpoint is disabled too).
 * - cancel: the endpoint was deleted.
 * - redeliver: the merchant asked for it again (from any state).
 */
export type DeliveryEvent = "succeed" | "retry" | "exhaust" | "gone" | "cancel" | "redeliver";

const TRANSITIONS: Record<DeliveryStatus, Partial<Record<DeliveryEvent, DeliveryStatus>>> = {
  PENDING: { succeed: "SUCCEEDED", retry: "PENDING", exhaust: "FAILED", gone: "FAILED", cancel: "FAILED", redeliver: "PENDING" },
  SUCCEEDED: { redeliver: "PENDING" },
  FAILED: { redeliver: "PENDING" },
};

export function deliveryTransition(from: DeliveryStatus, event: DeliveryEvent): DeliveryStatus {
  const to = TRANSITIONS[from][event];
  if (!to) throw new DomainError("failed_precondition", "INVALID_STATUS_TRANSITION", `a ${from.toLowerCase()} webhook delivery cannot ${event}`);
  return to;
}

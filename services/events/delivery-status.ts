import { defineStatusMachine } from "../platform/status-machine.ts";
import { DELIVERY_STATUSES, type DeliveryStatus } from "./contract.ts";

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

export const deliveryMachine = defineStatusMachine<DeliveryStatus, DeliveryEvent>(
  "webhook delivery",
  DELIVERY_STATUSES,
  [
    { from: "PENDING", event: "succeed", to: "SUCCEEDED" },
    { from: "PENDING", event: "retry", to: "PENDING" },
    { from: "PENDING", event: "exhaust", to: "FAILED" },
    { from: "PENDING", event: "gone", to: "FAILED" },
    { from: "PENDING", event: "cancel", to: "FAILED" },
    { from: "PENDING", event: "redeliver", to: "PENDING" },
    { from: "SUCCEEDED", event: "redeliver", to: "PENDING" },
    { from: "FAILED", event: "redeliver", to: "PENDING" },
  ],
  (from, event) => `a ${from.toLowerCase()} webhook delivery cannot ${event}`,
);

import { defineStatusMachine } from "../platform/status-machine.ts";
import { ENDPOINT_STATUSES, type EndpointStatus } from "./contract.ts";

/**
 * The webhook endpoint status machine: `from → event → to`. `gone` is the
 * receiver answering 410; only the merchant's `enable` brings it back.
 * Enabling an enabled endpoint (or disabling a disabled one) is a no-op.
 */
type EndpointEvent = "enable" | "disable" | "gone" | "delete";

export const endpointMachine = defineStatusMachine<EndpointStatus, EndpointEvent>(
  "webhook endpoint",
  ENDPOINT_STATUSES,
  [
    { from: "ENABLED", event: "enable", to: "ENABLED" },
    { from: "ENABLED", event: "disable", to: "DISABLED" },
    { from: "ENABLED", event: "gone", to: "DISABLED" },
    { from: "ENABLED", event: "delete", to: "DELETED" },
    { from: "DISABLED", event: "enable", to: "ENABLED" },
    { from: "DISABLED", event: "disable", to: "DISABLED" },
    { from: "DISABLED", event: "delete", to: "DELETED" },
  ],
  (from, event) => `a ${from.toLowerCase()} webhook endpoint cannot ${event}`,
);

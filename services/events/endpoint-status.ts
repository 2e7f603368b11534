import { DomainError } from "../platform/errors.ts";
import type { EndpointStatus } from "./webhook-entities.ts";

/**
 * The webhook endpoint status machine: `from → event → to`. `gone` is the
 * receiver answering 410; only the merchant's `enable` brings it back.
 * Enabling an enabled endpoint (or disabling a disabled one) is a no-op.
 */
export type EndpointEvent = "enable" | "disable" | "gone" | "delete";

const TRANSITIONS: Record<EndpointStatus, Partial<Record<EndpointEvent, EndpointStatus>>> = {
  ENABLED: { enable: "ENABLED", disable: "DISABLED", gone: "DISABLED", delete: "DELETED" },
  DISABLED: { enable: "ENABLED", disable: "DISABLED", delete: "DELETED" },
  DELETED: {},
};

export function endpointTransition(from: EndpointStatus, event: EndpointEvent): EndpointStatus {
  const to = TRANSITIONS[from][event];
  if (!to) throw new DomainError("failed_precondition", "INVALID_STATUS_TRANSITION", `a ${from.toLowerCase()} webhook endpoint cannot ${event}`);
  return to;
}

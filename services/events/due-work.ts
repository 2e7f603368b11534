import type { DueWorkProbe } from "../platform/observability/due-work.ts";
import { oldestUnrelayedEventAt } from "./event-store.ts";
import { oldestDueDeliveryAt } from "./webhook-delivery-store.ts";

/** Lag probes of the outbox relay and the webhook deliveries (an endpoint that is disabled waits on purpose: not counted). */
export const eventDueWork: DueWorkProbe[] = [
  { kind: "event_relay", group: "webhooks", oldestDue: oldestUnrelayedEventAt },
  { kind: "webhook_delivery", group: "webhooks", oldestDue: oldestDueDeliveryAt },
];

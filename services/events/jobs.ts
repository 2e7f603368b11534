import { defineJob } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import { relayEvents } from "./relay-events.ts";
import { sweepDueDeliveries } from "./sweep-due-deliveries.ts";
import { deliverToEndpoint } from "./deliver-to-endpoint.ts";

/**
 * The `webhooks` worker group. The relay turns committed events into
 * delivery rows (outbox → deliveries) and queues them; the due sweep finds
 * every pending delivery whose time has come again from Postgres (after a
 * Redis loss, a crash, or a sandbox clock move); `deliver` sends.
 */
export const relayEventsJob = defineJob<Record<string, never>>({
  name: "webhooks.relay-events",
  group: "webhooks",
  // Every webhook waits for this poll (an indexed read of unrelayed events): keep it
  // short even when the other sweeps are slow.
  every: (c) => Math.min(c.sweepIntervalMs, 500),
  async handle(deps) {
    await deps.clock.sync();
    await relayEvents(contextFor(deps), deps.queues);
  },
});

export const sweepDueDeliveriesJob = defineJob<Record<string, never>>({
  name: "webhooks.sweep-due-deliveries",
  group: "webhooks",
  every: (c) => c.sweepIntervalMs,
  async handle(deps) {
    await deps.clock.sync();
    await sweepDueDeliveries(contextFor(deps), deps.queues);
  },
});

export interface DeliverWebhooksPayload {
  endpointId: string;
  /** The delivery that caused this job (for logs); the endpoint's earliest due delivery goes first. */
  deliveryId?: string;
}

export const deliverWebhooksJob = defineJob<DeliverWebhooksPayload>({
  name: "webhooks.deliver",
  group: "webhooks",
  async handle(deps, payload) {
    await deliverToEndpoint(deps, payload.endpointId);
  },
});

export const webhookJobs = [relayEventsJob, sweepDueDeliveriesJob, deliverWebhooksJob];

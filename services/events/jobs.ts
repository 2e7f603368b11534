import { handleJob, handleSweep } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import { relayEvents } from "./relay-events.ts";
import { sweepDueDeliveries } from "./sweep-due-deliveries.ts";
import { deliverToEndpoint } from "./deliver-to-endpoint.ts";
import { deliverWebhooksKind, dueDeliveriesSweep, relayEventsSweep } from "./webhook-queue.ts";

/** Handlers of the `webhooks` group (kinds and enqueueing: webhook-queue.ts). */
export const webhookJobs = [
  handleSweep(relayEventsSweep, async (deps) => {
    await deps.clock.sync();
    await relayEvents(contextFor(deps), deps.queues);
  }),
  handleSweep(dueDeliveriesSweep, async (deps) => {
    await deps.clock.sync();
    await sweepDueDeliveries(contextFor(deps), deps.queues);
  }),
  handleJob(deliverWebhooksKind, async (deps, payload) => {
    await deliverToEndpoint(deps, payload.endpointId);
  }),
];

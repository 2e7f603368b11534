import { jobId, jobKind, ONE_SHOT, sweepKind } from "../platform/queue/job-kind.ts";
import type { Queues } from "../platform/queue/queues.ts";

/**
 * The `webhooks` worker group's jobs as producers see them. The relay turns
 * committed events into delivery rows (outbox → deliveries) and queues them;
 * the due sweep finds every pending delivery whose time has come again from
 * Postgres (after a Redis loss, a crash, or a sandbox clock move); `deliver`
 * sends. Handlers: jobs.ts.
 */
export const relayEventsSweep = sweepKind({
  name: "webhooks.relay-events",
  group: "webhooks",
  // Every webhook waits for this poll (an indexed read of unrelayed events): keep it
  // short even when the other sweeps are slow.
  every: (c) => Math.min(c.sweepIntervalMs, 500),
});

export const dueDeliveriesSweep = sweepKind({ name: "webhooks.sweep-due-deliveries", group: "webhooks", every: (c) => c.sweepIntervalMs });

interface DeliverWebhooksPayload {
  endpointId: string;
  /** The delivery that caused this job (for logs and its id); the endpoint's earliest due delivery goes first. */
  deliveryId?: string;
  /** The attempt this job is for (attempt_count + 1): retries get new ids. */
  attemptNumber?: number;
  /** For a drain without a delivery: what makes this drain's id unique. */
  drainToken?: string;
}

/**
 * Delivery jobs leave Redis when they finish, so the id only de-duplicates
 * jobs that are still waiting: the relay, the sweep and a retry asking for the
 * same attempt of the same delivery queue it once. Correctness does not rest
 * on this: the claim in Postgres decides who sends.
 */
export const deliverWebhooksKind = jobKind<DeliverWebhooksPayload>({
  name: "webhooks.deliver",
  group: "webhooks",
  id: (p) => (p.deliveryId ? jobId("wh", p.deliveryId, String(p.attemptNumber ?? 1)) : jobId("wh", p.endpointId, p.drainToken ?? "drain")),
  options: ONE_SHOT,
});

export const webhookJobKinds = [relayEventsSweep, dueDeliveriesSweep, deliverWebhooksKind];

interface DeliveryTarget {
  endpointId: string;
  deliveryId: string;
  attemptNumber: number;
}

export const deliveryJobId = (t: DeliveryTarget): string => deliverWebhooksKind.id(t);

export async function enqueueDelivery(queues: Queues, target: DeliveryTarget, delayMs = 0): Promise<boolean> {
  if (delayMs <= 0) {
    // A retry queued with a delay can fall due earlier on the service clock
    // (sandbox clock advanced): run that job now instead of being deduplicated by it.
    try {
      const existing = await queues.queue(deliverWebhooksKind.group).getJob(deliveryJobId(target));
      if (existing && (await existing.isDelayed())) {
        await existing.promote();
        return true;
      }
    } catch {
      // Redis unreachable or the job moved meanwhile: add() below reports or dedups.
    }
  }
  return queues.add(deliverWebhooksKind, { ...target }, { delay: delayMs });
}

/** Asks a worker to look at an endpoint's queue (after enable, or to continue a long backlog). */
export async function enqueueEndpointDrain(queues: Queues, endpointId: string, token: string): Promise<boolean> {
  return queues.add(deliverWebhooksKind, { endpointId, drainToken: token });
}

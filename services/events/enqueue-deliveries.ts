import { jobId } from "../platform/queue/define-job.ts";
import type { Queues } from "../platform/queue/queues.ts";
import { deliverWebhooksJob } from "./jobs.ts";

export interface DeliveryTarget {
  endpointId: string;
  deliveryId: string;
  /** The attempt this job is for (attempt_count + 1): retries get new ids. */
  attemptNumber: number;
}

/**
 * Delivery jobs leave Redis when they finish, so the id only de-duplicates
 * jobs that are still waiting: the relay, the sweep and a retry asking for the
 * same attempt of the same delivery queue it once. Correctness does not rest
 * on this: the claim in Postgres decides who sends.
 */
const JOB_OPTIONS = { removeOnComplete: true, removeOnFail: true } as const;

export const deliveryJobId = (t: DeliveryTarget): string => jobId("wh", t.deliveryId, String(t.attemptNumber));

export async function enqueueDelivery(queues: Queues, target: DeliveryTarget, delayMs = 0): Promise<boolean> {
  const id = deliveryJobId(target);
  if (delayMs <= 0) {
    // A retry queued with a delay can fall due earlier on the service clock
    // (sandbox clock advanced): run that job now instead of being deduplicated by it.
    try {
      const existing = await queues.queue(deliverWebhooksJob.group).getJob(id);
      if (existing && (await existing.isDelayed())) {
        await existing.promote();
        return true;
      }
    } catch {
      // Redis unreachable or the job moved meanwhile: add() below reports or dedups.
    }
  }
  return queues.add(
    deliverWebhooksJob,
    { endpointId: target.endpointId, deliveryId: target.deliveryId },
    { ...JOB_OPTIONS, jobId: id, ...(delayMs > 0 && { delay: Math.ceil(delayMs) }) },
  );
}

/** Asks a worker to look at an endpoint's queue (after enable, or to continue a long backlog). */
export async function enqueueEndpointDrain(queues: Queues, endpointId: string, token: string): Promise<boolean> {
  return queues.add(deliverWebhooksJob, { endpointId }, { ...JOB_OPTIONS, jobId: jobId("wh", endpointId, token) });
}

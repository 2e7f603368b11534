import type { UseCaseContext } from "../platform/use-case.ts";
import type { Queues } from "../platform/queue/queues.ts";
import { enqueueDelivery } from "./webhook-queue.ts";
import { firstDueDeliveryPerIdleEndpoint } from "./webhook-delivery-store.ts";

const MAX_ENDPOINTS_PER_SWEEP = 1000;

/**
 * Postgres is the schedule: every PENDING delivery whose next_attempt_at has
 * come (on the service clock) on an enabled endpoint that nobody is sending
 * to (no live lease) gets its endpoint queued again. This recovers jobs lost
 * with Redis, a crash between commit and enqueue, a worker killed mid-send
 * (once its lease expires) and retries moved earlier by the sandbox clock.
 */
export async function sweepDueDeliveries(ctx: UseCaseContext, queues: Queues): Promise<number> {
  const due = await firstDueDeliveryPerIdleEndpoint(ctx.em, ctx.clock.now(), MAX_ENDPOINTS_PER_SWEEP);
  for (const d of due) {
    await enqueueDelivery(queues, { endpointId: d.endpoint_id, deliveryId: d.id, attemptNumber: d.attempt_count + 1 });
  }
  return due.length;
}

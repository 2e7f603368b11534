import type { Queue } from "bullmq";
import type { SweepKind } from "../services/platform/queue/job-kind.ts";

/** (Re)declares a sweep's BullMQ job scheduler; idempotent across processes (start-up, reconnects, the watchdog). */
export function declareSweep(queue: Queue, kind: SweepKind, config: { sweepIntervalMs: number; reconcileIntervalMs: number }) {
  return queue.upsertJobScheduler(kind.name, { every: kind.every(config) }, { name: kind.name, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } });
}

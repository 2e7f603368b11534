import { handleSweep } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import { retentionSweep } from "./retention-queue.ts";
import { sweepRetention } from "./sweep-retention.ts";

/** Months created and dropped and steps left to lock contention are counted, rows per table set (billing_retention_*); the use case logs what it did. */
export const retentionJobs = [
  handleSweep(retentionSweep, async (deps) => {
    const res = await sweepRetention(contextFor(deps), deps.config.retention, deps.logger);
    for (const t of res.tables) {
      deps.metrics?.retentionPartitionsCreated.inc({ table: t.table }, t.created.length);
      deps.metrics?.retentionPartitionsDropped.inc({ table: t.table }, t.dropped.length);
      deps.metrics?.retentionContention.inc({ table: t.table }, t.contended.length);
      deps.metrics?.retentionRows.set({ table: t.table }, t.rows);
    }
  }),
];

import type { Queues } from "./queues.ts";

/**
 * Whether Redis lost its data (FLUSHALL, a restart without persistence)
 * since the marker `name` was last set: work that Postgres records as handed
 * to Redis before then (a claim whose job waits in a queue) has no job any
 * more and must be handed over again. A missing marker is set back at once
 * (`SET NX`, one round trip), and only the caller that set it is told
 * "lost", so one process acts on each loss. The first call ever also answers
 * "lost": an empty Redis cannot tell. "unknown" when Redis does not answer
 * (nothing can be concluded then). Redis must not evict keys (BullMQ asks
 * for `maxmemory-policy noeviction` too), or an evicted marker reads as a loss.
 */
export async function checkDataLossMarker(queues: Queues, name: string): Promise<"kept" | "lost" | "unknown"> {
  try {
    return (await queues.connection.set(`${queues.prefix}:data-marker:${name}`, "1", "NX")) === "OK" ? "lost" : "kept";
  } catch {
    return "unknown";
  }
}

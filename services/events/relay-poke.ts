import { setTimeout as sleep } from "node:timers/promises";
import type { JobDeps } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import { listenForPokes, type PokeListener } from "../platform/queue/pokes.ts";
import { relayEvents } from "./relay-events.ts";
import { relayEventsSweep } from "./webhook-queue.ts";
import { observeJob } from "../platform/observability/job-metrics.ts";

/** How long a run that follows another waits for more commits to join it. */
const RELAY_COALESCE_MS = 20;

/** Published after the commit of every transaction that recorded events (cli/system.ts wires pokeAfterCommit). */
export const EVENTS_COMMITTED_POKE = "events-committed";

/**
 * Runs the outbox relay as soon as events are committed, instead of at the
 * relay sweep's next period (which stays as the safety net). Pokes that come
 * while a relay runs collapse into one more run after it, which waits
 * RELAY_COALESCE_MS first: under a steady stream of commits (hundreds of
 * creates per second) each run then relays a batch instead of a few events,
 * for a handful of statements per batch; a lone event is relayed at once.
 * The relay takes an advisory lock, so this and the sweep (in any process)
 * never relay twice. The poke is a Redis PUBLISH, not LISTEN/NOTIFY: it needs
 * no session of its own on PostgreSQL, so it works unchanged behind a pooler
 * in transaction mode (docs/operations.md, Behind PgBouncer).
 */
export function startRelayPoke(deps: JobDeps): PokeListener {
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  const run = () => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = relay();
  };
  const relay = async () => {
    try {
      do {
        again = false;
        // Counted as the relay sweep's runs (billing_job_duration_seconds{job_name="webhooks.relay-events"}).
        await observeJob(deps.metrics, relayEventsSweep.name, async () => {
          await deps.clock.sync();
          await relayEvents(contextFor(deps), deps.queues);
        });
        if (again && !closed) await sleep(RELAY_COALESCE_MS);
      } while (again && !closed);
    } catch (err) {
      deps.logger.warn({ err }, "relay after a notification failed; the relay sweep will retry");
    } finally {
      running = undefined;
    }
  };
  const listening = listenForPokes(deps.config, deps.config.queuePrefix, EVENTS_COMMITTED_POKE, run, deps.logger);
  return {
    async close() {
      closed = true;
      await listening.close();
      await running;
    },
  };
}

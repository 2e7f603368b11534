import { eventually } from "./eventually.ts";
import type { TestSystem } from "./system.ts";
import { recordEvent } from "../../services/events/record-event.ts";
import type { EventType } from "../../services/events/contract.ts";

/** Records events for a merchant the way producers do (inside a transaction); returns their ids in order. */
export async function emitEvents(
  sys: TestSystem,
  merchantId: string,
  count: number,
  type: EventType = "plan.created",
  data: (i: number) => Record<string, unknown> = (i) => ({ n: i }),
): Promise<string[]> {
  const ctx = sys.context();
  const ids: string[] = [];
  // One transaction per event, like real changes: each commits on its own.
  for (let i = 0; i < count; i++) {
    const id = await ctx.em.transactional(async (em) => recordEvent(em, ctx.clock, { merchantId, type, data: data(i) }).id);
    ids.push(id);
  }
  return ids;
}

/**
 * Polls until the outbox relay has passed every one of `eventIds` (out of
 * its outbox): from then on the deliveries they get, if any, exist in Postgres. A
 * relay run started before the events committed can miss them and hold the
 * relay lock meanwhile, so running the relay by hand is not enough to know.
 */
export async function waitUntilRelayed(sys: TestSystem, eventIds: readonly string[], timeoutMs = 15_000): Promise<void> {
  let unrelayed = eventIds.length;
  await eventually(
    async () => {
      const [row] = await sys.sql<{ n: string }>("select count(*) as n from event_outbox where consumer = 'relay' and event_id = any(?::uuid[])", [
        `{${eventIds.join(",")}}`,
      ]);
      unrelayed = Number(row!.n);
      return unrelayed === 0;
    },
    timeoutMs,
    () => `the relay to pass every event (${unrelayed} of ${eventIds.length} not relayed)`,
    25,
  );
}

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

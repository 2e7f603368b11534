import { randomUUID } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import type { Queues } from "../platform/queue/queues.ts";
import { subscribesTo } from "./webhook-endpoint-input.ts";
import { deliverWebhooksKind } from "./webhook-queue.ts";
import { readByIndexesOnly } from "../platform/database/index-only-reads.ts";
import { lockUnrelayedEvents, markEventsRelayed, tryTakeRelayTurn } from "./event-store.ts";
import { insertFirstDeliveries, type CreatedDelivery } from "./webhook-delivery-store.ts";
import { enabledEndpointsOf } from "./webhook-endpoint-store.ts";

const BATCH_SIZE = 500;
const MAX_BATCHES_PER_RUN = 20;
/** pg advisory lock id: one relay at a time, so events are relayed in seq order (a per-transaction lock: tryTakeRelayTurn). */
const RELAY_LOCK = 4_004_001;

/**
 * The outbox relay. In one transaction per batch: take unrelayed events in
 * seq order (`for update skip locked`), create one PENDING delivery per
 * matching enabled endpoint (`on conflict do nothing`: running twice creates
 * nothing twice), give the events their feed positions and take them out of
 * the relay's outbox. Only after the commit are the
 * jobs queued; if that fails (Redis down) or the process dies first, the
 * due-deliveries sweep queues them from Postgres later.
 */
export async function relayEvents(ctx: UseCaseContext, queues: Queues): Promise<{ events: number; deliveries: number }> {
  let events = 0;
  let deliveries = 0;
  for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
    const result = await ctx.em.transactional(async (em) => {
      if (!(await tryTakeRelayTurn(em, RELAY_LOCK))) return undefined;
      await readByIndexesOnly(em);
      // created_at as fixed-width UTC text: exact to the microsecond (a JS Date keeps milliseconds), it becomes the deliveries' partition key.
      const rows = await lockUnrelayedEvents(em, BATCH_SIZE);
      if (rows.length === 0) return { events: 0, created: [] as CreatedDelivery[] };
      const now = ctx.clock.now();
      const merchantIds = [...new Set(rows.map((r) => r.merchant_id))];
      const endpoints = await enabledEndpointsOf(em, merchantIds);
      const planned = rows.flatMap((event) =>
        endpoints
          .filter((e) => e.merchant_id === event.merchant_id && subscribesTo(e.enabled_events, event.type))
          .map((e) => ({
            id: randomUUID(),
            merchant_id: event.merchant_id,
            event_id: event.id,
            endpoint_id: e.id,
            event_seq: event.seq,
            event_created_at: event.created_at,
          })),
      );
      const created = planned.length ? await insertFirstDeliveries(em, planned, now) : [];
      // Feed positions follow the relay (one at a time, committed events only): commit order,
      // numbered per merchant (1, 2, 3… for each), so no gap is skipped and no volume is revealed.
      const perMerchant = new Map<string, number>();
      const positions = rows.map((r) => {
        const ord = (perMerchant.get(r.merchant_id) ?? 0) + 1;
        perMerchant.set(r.merchant_id, ord);
        return { id: r.id, merchant_id: r.merchant_id, seq: r.seq, created_at: r.created_at, ord };
      });
      await markEventsRelayed(em, positions, now);
      return { events: rows.length, created };
    });
    if (!result) break; // another relay is running
    events += result.events;
    deliveries += result.created.length;
    await enqueueFirstPerEndpoint(queues, result.created);
    if (result.events < BATCH_SIZE) break;
  }
  return { events, deliveries };
}

/**
 * One job per endpoint is enough: the worker that takes it drains the
 * endpoint's due deliveries in order. Its id names a delivery just created,
 * so it can never be swallowed by a job that is finishing for that endpoint.
 */
async function enqueueFirstPerEndpoint(queues: Queues, created: CreatedDelivery[]): Promise<void> {
  const first = new Map<string, CreatedDelivery>();
  for (const d of created) {
    const seen = first.get(d.endpoint_id);
    if (!seen || BigInt(d.event_seq) < BigInt(seen.event_seq)) first.set(d.endpoint_id, d);
  }
  // First attempts of deliveries just created: no delayed job of theirs can exist (only retries are delayed),
  // so one bulk add, without enqueueDelivery's look for a delayed job to promote.
  await queues.addBulk(
    deliverWebhooksKind,
    [...first.values()].map((d) => ({ endpointId: d.endpoint_id, deliveryId: d.id, attemptNumber: 1 })),
  );
}

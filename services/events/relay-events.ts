import { randomUUID } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import type { Queues } from "../platform/queue/queues.ts";
import { subscribesTo } from "./webhook-endpoint-input.ts";
import { deliverWebhooksKind } from "./webhook-queue.ts";

const BATCH_SIZE = 500;
const MAX_BATCHES_PER_RUN = 20;
/**
 * pg advisory lock id: one relay at a time, so events are relayed in seq order.
 * Taken per transaction (`pg_try_advisory_xact_lock`, released at commit), never
 * per session: a pooler in transaction mode hands the next transaction to
 * another server session, where a session lock would be neither held nor
 * released.
 */
const RELAY_LOCK = 4_004_001;

interface CreatedDelivery {
  id: string;
  endpoint_id: string;
  event_seq: string;
}

/**
 * The outbox relay. In one transaction per batch: take unrelayed events in
 * seq order (`for update skip locked`), create one PENDING delivery per
 * matching enabled endpoint (`on conflict do nothing`: running twice creates
 * nothing twice), and mark the events relayed. Only after the commit are the
 * jobs queued; if that fails (Redis down) or the process dies first, the
 * due-deliveries sweep queues them from Postgres later.
 */
export async function relayEvents(ctx: UseCaseContext, queues: Queues): Promise<{ events: number; deliveries: number }> {
  let events = 0;
  let deliveries = 0;
  for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
    const result = await ctx.em.transactional(async (em) => {
      const [lock] = await em.execute<{ locked: boolean }[]>("select pg_try_advisory_xact_lock(?) as locked", [RELAY_LOCK]);
      if (!lock?.locked) return undefined;
      // created_at as Postgres text: exact to the microsecond (a JS Date keeps milliseconds), it becomes the deliveries' partition key.
      const rows = await em.execute<{ id: string; merchant_id: string; type: string; seq: string; created_at: string }[]>(
        "select id, merchant_id, type, seq, created_at::text as created_at from events where relayed_at is null order by seq limit ? for update skip locked",
        [BATCH_SIZE],
      );
      if (rows.length === 0) return { events: 0, created: [] as CreatedDelivery[] };
      const now = ctx.clock.now();
      const merchantIds = [...new Set(rows.map((r) => r.merchant_id))];
      const endpoints = await em.execute<{ id: string; merchant_id: string; enabled_events: string[] }[]>(
        "select id, merchant_id, enabled_events from webhook_endpoints where status = 'ENABLED' and merchant_id = any(string_to_array(?, ',')::uuid[])",
        [merchantIds.join(",")],
      );
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
      const created = planned.length
        ? await em.execute<CreatedDelivery[]>(
            `insert into webhook_deliveries (id, merchant_id, event_id, endpoint_id, event_seq, status, attempt_count, retry_index, next_attempt_at, created_at, updated_at, event_created_at)
             select t.id, t.merchant_id, t.event_id, t.endpoint_id, t.event_seq, 'PENDING', 0, 0, ?, ?, ?, t.event_created_at
               from jsonb_to_recordset(?::jsonb) as t(id uuid, merchant_id uuid, event_id uuid, endpoint_id uuid, event_seq bigint, event_created_at timestamptz)
             on conflict (event_id, endpoint_id, event_created_at) do nothing
             returning id, endpoint_id, event_seq`,
            [now, now, now, JSON.stringify(planned)],
          )
        : [];
      // Feed positions follow the relay (one at a time, committed events only): commit order,
      // numbered per merchant (1, 2, 3… for each), so no gap is skipped and no volume is revealed.
      const perMerchant = new Map<string, number>();
      const positions = rows.map((r) => {
        const ord = (perMerchant.get(r.merchant_id) ?? 0) + 1;
        perMerchant.set(r.merchant_id, ord);
        return { id: r.id, merchant_id: r.merchant_id, ord };
      });
      // Each merchant's last position is read once, before any row is numbered: read per row, the backward
      // index scan would step over every entry this very update has added (quadratic in the batch size).
      await em.execute(
        `with x as (
           select * from jsonb_to_recordset(?::jsonb) as x(id uuid, merchant_id uuid, ord bigint)
         ), bases as materialized (
           select m.merchant_id,
                  coalesce((select max(e.published_seq) from events e where e.merchant_id = m.merchant_id and e.published_seq is not null), 0) as base
             from (select distinct merchant_id from x) m
         )
         update events e set relayed_at = ?, published_seq = b.base + x.ord
           from x join bases b on b.merchant_id = x.merchant_id
          where e.id = x.id`,
        [JSON.stringify(positions), now],
      );
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

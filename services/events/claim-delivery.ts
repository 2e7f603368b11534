import { randomUUID } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import { eventBody } from "./event-record.ts";
import { decryptSecret } from "./webhook-secret.ts";

export interface ClaimedDelivery {
  deliveryId: string;
  attemptId: string;
  attemptNumber: number;
  /** Failed attempts so far in this round (the position in the retry schedule). */
  retryIndex: number;
  endpointId: string;
  eventId: string;
  url: string;
  /** Active signing secrets, newest first. */
  secrets: string[];
  body: string;
}

/** The endpoint as the claim read it under its row lock. */
export interface ClaimedEndpoint {
  url: string;
  /** Active signing secrets, newest first. */
  secrets: string[];
  /** Requests in flight at once (1 when ordered). */
  maxInFlight: number;
  /** One at a time, in event order. */
  ordered: boolean;
}

export type ClaimResult =
  | { kind: "claimed"; endpoint: ClaimedEndpoint; deliveries: ClaimedDelivery[] }
  /** Another worker holds the endpoint; it will reach our deliveries. */
  | { kind: "busy" }
  /** Nothing due, or the endpoint is disabled or deleted; any lease of ours is released. */
  | { kind: "idle" };

interface EndpointLockRow {
  status: string;
  url: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_active: boolean;
  lease_holder: string | null;
  leased: boolean;
  max_in_flight: number;
  ordered: boolean;
}

interface ClaimedRow {
  id: string;
  event_id: string;
  attempt_number: number;
  retry_index: number;
  attempt_id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
  published_seq: string | null;
}

/**
 * Takes up to `limit` of the endpoint's due deliveries, in event order, under
 * a row lock on the endpoint: one worker at a time sends to an endpoint, and
 * it sends at most max_in_flight of them at once (one when the endpoint is
 * ordered). The lease (database time, so every worker agrees) covers the
 * whole batch and lets the sweep hand the endpoint to another worker if this
 * one dies mid-send. Attempts are recorded IN_PROGRESS now, before the
 * requests, so that a crash leaves a trace (INTERRUPTED at the next claim).
 * Three statements whatever the batch size; the due rows come from the
 * partial claim index in event order and the scan stops at the LIMIT, so the
 * cost does not grow with the pending backlog (migration 0018).
 */
export async function claimDeliveries(
  ctx: UseCaseContext,
  options: {
    endpointId: string;
    holder: string;
    leaseMs: number;
    secretsKey: Buffer;
    limit: (endpoint: { ordered: boolean; maxInFlight: number }) => number;
    /** Deliveries this holder has claimed and not recorded yet (in flight): never claimed twice, and the lease is kept. */
    holding?: readonly string[];
  },
): Promise<ClaimResult> {
  return ctx.em.transactional(async (em) => {
    const now = ctx.clock.now();
    const [endpoint] = await em.execute<EndpointLockRow[]>(
      `select status, url, secret_ciphertext, previous_secret_ciphertext,
              coalesce(previous_secret_expires_at > ?, false) as previous_secret_active,
              lease_holder, coalesce(lease_expires_at > clock_timestamp(), false) as leased, max_in_flight, ordered
         from webhook_endpoints where id = ? for update`,
      [now, options.endpointId],
    );
    if (!endpoint) return { kind: "idle" };
    if (endpoint.leased && endpoint.lease_holder !== options.holder) return { kind: "busy" };
    const holding = options.holding ?? [];
    const release = async () => {
      // Still sending: keep the lease, or another worker could send the same deliveries again.
      if (holding.length > 0 && endpoint.lease_holder === options.holder) return { kind: "idle" } as const;
      if (endpoint.lease_holder !== null) {
        await em.execute("update webhook_endpoints set lease_holder = null, lease_expires_at = null where id = ?", [options.endpointId]);
      }
      return { kind: "idle" } as const;
    };
    if (endpoint.status !== "ENABLED") return release();
    const inFlight = endpoint.ordered ? 1 : endpoint.max_in_flight;
    const limit = Math.max(1, options.limit({ ordered: endpoint.ordered, maxInFlight: inFlight }));
    // Rounds of requests this batch can take, each within one lease period.
    const leaseMs = Math.ceil(limit / inFlight) * options.leaseMs;
    const rows = await em.execute<ClaimedRow[]>(
      `with due as (
         select d.id, d.event_id, d.attempt_count, d.retry_index, d.event_seq
           from webhook_deliveries d
          where d.endpoint_id = ? and d.status = 'PENDING' and d.next_attempt_at <= ? and d.id <> all(?::uuid[])
          order by d.event_seq, d.id
          limit ?
       ), interrupted as (
         update webhook_delivery_attempts a
            set outcome = 'INTERRUPTED', error = 'the worker stopped before the answer was recorded'
           from due where a.delivery_id = due.id and due.attempt_count > 0 and a.outcome = 'IN_PROGRESS'
         returning a.id
       ), bumped as (
         update webhook_deliveries w set attempt_count = due.attempt_count + 1, last_attempt_at = ?, updated_at = ?
           from due where w.id = due.id
         returning w.id
       ), lease as (
         update webhook_endpoints set lease_holder = ?, lease_expires_at = clock_timestamp() + (? * interval '1 millisecond')
          where id = ? and exists (select 1 from due)
         returning id
       ), attempts as (
         insert into webhook_delivery_attempts (id, delivery_id, endpoint_id, event_id, attempt_number, attempted_at, outcome)
         select gen_random_uuid(), due.id, ?, due.event_id, due.attempt_count + 1, ?, 'IN_PROGRESS' from due
         returning id, delivery_id
       )
       select due.id, due.event_id, due.attempt_count + 1 as attempt_number, due.retry_index, attempts.id as attempt_id,
              e.type, e.created_at, e.data, e.published_seq
         from due join attempts on attempts.delivery_id = due.id join events e on e.id = due.event_id
        order by due.event_seq, due.id`,
      [options.endpointId, now, `{${holding.join(",")}}`, limit, now, now, options.holder, leaseMs, options.endpointId, options.endpointId, now],
    );
    if (rows.length === 0) return release();
    const secrets = [decryptSecret(options.secretsKey, options.endpointId, endpoint.secret_ciphertext)];
    if (endpoint.previous_secret_ciphertext && endpoint.previous_secret_active) {
      secrets.push(decryptSecret(options.secretsKey, options.endpointId, endpoint.previous_secret_ciphertext));
    }
    return {
      kind: "claimed",
      endpoint: { url: endpoint.url, secrets, maxInFlight: inFlight, ordered: endpoint.ordered },
      deliveries: rows.map((due) => ({
        deliveryId: due.id,
        attemptId: due.attempt_id,
        attemptNumber: due.attempt_number,
        retryIndex: due.retry_index,
        endpointId: options.endpointId,
        eventId: due.event_id,
        url: endpoint.url,
        secrets,
        body: eventBody({ id: due.event_id, type: due.type, createdAt: new Date(due.created_at), data: due.data, publishedSeq: due.published_seq }),
      })),
    };
  });
}

/** Gives the endpoint back before the lease would expire (end of a worker's turn). */
export async function releaseEndpoint(ctx: UseCaseContext, endpointId: string, holder: string): Promise<void> {
  await ctx.em.execute("update webhook_endpoints set lease_holder = null, lease_expires_at = null where id = ? and lease_holder = ?", [
    endpointId,
    holder,
  ]);
}

export const newLeaseHolder = (): string => randomUUID();

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

export type ClaimResult =
  | { kind: "claimed"; delivery: ClaimedDelivery }
  /** Another worker holds the endpoint; it will reach our delivery in order. */
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
}

interface DueRow {
  id: string;
  event_id: string;
  attempt_count: number;
  retry_index: number;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
  published_seq: string | null;
}

/**
 * Takes the endpoint's next due delivery, in event order, under a row lock
 * on the endpoint: at most one request is in flight per endpoint, and first
 * attempts go out in the order the events were created. The lease (database
 * time, so every worker agrees) lets the sweep hand the endpoint to another
 * worker if this one dies mid-send. The attempt is recorded IN_PROGRESS now,
 * before the request, so that a crash leaves a trace (INTERRUPTED).
 * Raw SQL: this runs once per webhook sent, so round trips are counted.
 */
export async function claimNextDelivery(
  ctx: UseCaseContext,
  options: { endpointId: string; holder: string; leaseMs: number; secretsKey: Buffer },
): Promise<ClaimResult> {
  return ctx.em.transactional(async (em) => {
    const now = ctx.clock.now();
    const [endpoint] = await em.execute<EndpointLockRow[]>(
      `select status, url, secret_ciphertext, previous_secret_ciphertext,
              coalesce(previous_secret_expires_at > ?, false) as previous_secret_active,
              lease_holder, coalesce(lease_expires_at > clock_timestamp(), false) as leased
         from webhook_endpoints where id = ? for update`,
      [now, options.endpointId],
    );
    if (!endpoint) return { kind: "idle" };
    if (endpoint.leased && endpoint.lease_holder !== options.holder) return { kind: "busy" };
    const release = async () => {
      if (endpoint.lease_holder !== null) {
        await em.execute("update webhook_endpoints set lease_holder = null, lease_expires_at = null where id = ?", [options.endpointId]);
      }
      return { kind: "idle" } as const;
    };
    if (endpoint.status !== "ENABLED") return release();
    const [due] = await em.execute<DueRow[]>(
      `select d.id, d.event_id, d.attempt_count, d.retry_index, e.type, e.created_at, e.data, e.published_seq
         from webhook_deliveries d join events e on e.id = d.event_id
        where d.endpoint_id = ? and d.status = 'PENDING' and d.next_attempt_at <= ?
        order by d.event_seq, d.id limit 1`,
      [options.endpointId, now],
    );
    if (!due) return release();
    const attemptNumber = due.attempt_count + 1;
    const attemptId = randomUUID();
    if (due.attempt_count > 0) {
      await em.execute(
        `update webhook_delivery_attempts
            set outcome = 'INTERRUPTED', error = 'the worker stopped before the answer was recorded'
          where delivery_id = ? and outcome = 'IN_PROGRESS'`,
        [due.id],
      );
    }
    await em.execute(
      `with delivery as (
         update webhook_deliveries set attempt_count = ?, last_attempt_at = ?, updated_at = ? where id = ? returning id
       ), lease as (
         update webhook_endpoints set lease_holder = ?, lease_expires_at = clock_timestamp() + (? * interval '1 millisecond') where id = ? returning id
       )
       insert into webhook_delivery_attempts (id, delivery_id, endpoint_id, event_id, attempt_number, attempted_at, outcome)
       select ?, delivery.id, lease.id, ?, ?, ?, 'IN_PROGRESS' from delivery, lease`,
      [attemptNumber, now, now, due.id, options.holder, options.leaseMs, options.endpointId, attemptId, due.event_id, attemptNumber, now],
    );
    const secrets = [decryptSecret(options.secretsKey, options.endpointId, endpoint.secret_ciphertext)];
    if (endpoint.previous_secret_ciphertext && endpoint.previous_secret_active) {
      secrets.push(decryptSecret(options.secretsKey, options.endpointId, endpoint.previous_secret_ciphertext));
    }
    return {
      kind: "claimed",
      delivery: {
        deliveryId: due.id,
        attemptId,
        attemptNumber,
        retryIndex: due.retry_index,
        endpointId: options.endpointId,
        eventId: due.event_id,
        url: endpoint.url,
        secrets,
        body: eventBody({ id: due.event_id, type: due.type, createdAt: new Date(due.created_at), data: due.data, publishedSeq: due.published_seq }),
      },
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

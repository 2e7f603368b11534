import { randomUUID } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import { eventBody } from "./event-record.ts";
import type { KeyObject } from "node:crypto";
import { openSecret } from "../platform/sealed-secret.ts";
import { signingKey } from "./webhook-secret.ts";

export interface ClaimedDelivery {
  deliveryId: string;
  attemptId: string;
  attemptNumber: number;
  /** Failed attempts so far in this round (the position in the retry schedule). */
  retryIndex: number;
  endpointId: string;
  eventId: string;
  /** The event's createdAt as Postgres text (exact to the microsecond): the delivery's and attempt's partition key. */
  eventCreatedAt: string;
  url: string;
  /** Active signing secrets (their HMAC keys), newest first. */
  secrets: KeyObject[];
  body: string;
}

/** One answer as the batch record writes it (recordAndClaim below; built by record-attempt.ts). */
export interface AttemptRecordItem {
  attempt_id: string;
  delivery_id: string;
  /** ISO time of the event: the partition key of the delivery and the attempt. */
  event_created_at: string;
  attempt_number: number;
  outcome: "SUCCEEDED" | "FAILED";
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  excerpt: string | null;
  next_status: string;
  next_attempt_at: string | null;
  retry_index: number;
}

/** The endpoint as the claim read it under its row lock. */
export interface ClaimedEndpoint {
  url: string;
  /** Active signing secrets (their HMAC keys), newest first. */
  secrets: KeyObject[];
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

/**
 * A worker's turn on one endpoint: at least `min` deliveries, `rounds` rounds
 * of its max_in_flight; then it yields the slot so other endpoints are served too.
 */
const TURN = { min: 200, rounds: 20 };
export const turnLength = (inFlight: number): number => Math.max(TURN.min, TURN.rounds * inFlight);

interface ClaimRow {
  /** Deliveries of `record` whose answer moved them (the others were superseded), comma-separated; on the first row only. */
  recorded: string | null;
  /** Endpoint columns (null when the endpoint row is gone). */
  status: string | null;
  url: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_active: boolean;
  busy: boolean;
  in_flight: number;
  ordered: boolean;
  /** The claimed delivery of this row; null on the one row of a statement that claimed none. */
  id: string | null;
  event_id: string;
  attempt_number: number;
  retry_index: number;
  attempt_id: string;
  type: string;
  created_at: string;
  event_created_at: string;
  data: Record<string, unknown>;
  published_seq: string | null;
}

export interface RecordAndClaimResult {
  /** Deliveries of `record` that the answers moved (recorded); the others were superseded by a newer attempt. */
  recorded: ReadonlySet<string>;
  claim: ClaimResult;
}

/**
 * Records the answers that came back (if any) and takes the endpoint's next
 * due deliveries, in event order, in one statement: one round trip and one
 * commit per batch of answers, whatever its size.
 *
 * Recording: each delivery moves only if it is still at the answered attempt
 * (`attempt_count` guard), so a stale worker cannot overwrite a newer attempt.
 *
 * Claiming happens under a row lock on the endpoint: one worker at a time
 * sends to an endpoint, and it sends at most max_in_flight at once (one when
 * the endpoint is ordered): the batch is the slots left free by the requests
 * still out (`inFlight`). The lease (database time, so every worker agrees)
 * covers them and lets the sweep hand the endpoint to another worker if this
 * one dies mid-send. Attempts are recorded IN_PROGRESS now, before the
 * requests, so that a crash leaves a trace (INTERRUPTED at the next claim).
 * The due rows come from the partial claim index in event order and the scan
 * stops at the LIMIT, so the cost does not grow with the pending backlog
 * (migration 0018). The endpoint lock is FOR NO KEY UPDATE: it serialises
 * claimers, yet does not wait for the relay's inserts (their foreign-key
 * checks hold KEY SHARE on the endpoint row until they commit). A claimer that
 * waited for the lock reads the deliveries from a snapshot taken before it
 * waited, so a delivery is taken only if its newest committed version is still
 * due at the attempt that was read (the guarded update): never one that
 * another worker recorded meanwhile.
 */
export async function recordAndClaim(
  ctx: UseCaseContext,
  options: {
    endpointId: string;
    holder: string;
    leaseMs: number;
    secretsKey: Buffer;
    /** Answers to record first (judgeAnswers; none of them 410). */
    record: readonly AttemptRecordItem[];
    /** Claim more (false: only record, and keep the lease while requests are out). */
    claim: boolean;
    /** Requests of this holder still on their way (their answers are not in `record`): never claimed twice, and the lease is kept. */
    inFlight: readonly string[];
    /** Deliveries already claimed in this worker's turn on the endpoint (see turnLength). */
    turnClaimed: number;
    /** Signing keys decrypted by an earlier claim of this turn, by ciphertext (decrypted once per turn). */
    secretCache?: Map<string, KeyObject>;
  },
): Promise<RecordAndClaimResult> {
  const now = ctx.clock.now();
  // Excluded from the claim: the requests still out, and the answers this statement records
  // (its snapshot still shows them due; the record's write and the claim's must not meet on one row).
  const excluded = [...options.inFlight, ...options.record.map((r) => r.delivery_id)];
  const rows = await ctx.em.execute<ClaimRow[]>(
    `with input as (
       select * from jsonb_to_recordset(?::jsonb) as x(attempt_id uuid, delivery_id uuid, event_created_at timestamptz, attempt_number int, outcome text, status_code int,
         error text, duration_ms int, excerpt text, next_status text, next_attempt_at timestamptz, retry_index int)
     ), answered as (
       update webhook_delivery_attempts a
          set outcome = i.outcome, status_code = i.status_code, error = i.error, duration_ms = i.duration_ms, response_excerpt = i.excerpt
         from input i where a.id = i.attempt_id and a.event_created_at = i.event_created_at and a.outcome = 'IN_PROGRESS'
       returning a.id
     ), recorded as (
       update webhook_deliveries d
          set status = i.next_status, next_attempt_at = i.next_attempt_at, retry_index = i.retry_index,
              last_status_code = i.status_code, last_error = i.error, updated_at = ?
         from input i
        where d.id = i.delivery_id and d.event_created_at = i.event_created_at and d.attempt_count = i.attempt_number and d.status = 'PENDING'
       returning d.id
     ), ep as (
       select id, status, url, secret_ciphertext, previous_secret_ciphertext,
              coalesce(previous_secret_expires_at > ?, false) as previous_secret_active,
              lease_holder, coalesce(lease_expires_at > clock_timestamp(), false) and lease_holder is distinct from ?::uuid as busy,
              case when ordered then 1 else max_in_flight end as in_flight, ordered
         from webhook_endpoints where id = ? for no key update
     ), mine as (
       select ep.id, greatest(1, least(ep.in_flight - ?, greatest(?, ? * ep.in_flight) - ?)) as batch
         from ep where ? and ep.status = 'ENABLED' and not ep.busy
     ), due as (
       select d.id, d.event_id, d.attempt_count, d.retry_index, d.event_seq, d.event_created_at
         from mine cross join lateral (
           select d.id, d.event_id, d.attempt_count, d.retry_index, d.event_seq, d.event_created_at
             from webhook_deliveries d
            where d.endpoint_id = mine.id and d.status = 'PENDING' and d.next_attempt_at <= ? and d.id <> all(?::uuid[])
            order by d.event_seq, d.id
            limit mine.batch
         ) d
     ), bumped as (
       update webhook_deliveries w set attempt_count = due.attempt_count + 1, last_attempt_at = ?, updated_at = ?
         from due
        where w.id = due.id and w.status = 'PENDING' and w.attempt_count = due.attempt_count and w.next_attempt_at <= ?
       returning w.id, w.event_id, w.attempt_count, w.retry_index, w.event_seq, w.event_created_at
     ), interrupted as (
       update webhook_delivery_attempts a
          set outcome = 'INTERRUPTED', error = 'the worker stopped before the answer was recorded'
         from bumped where a.delivery_id = bumped.id and bumped.attempt_count > 1 and a.outcome = 'IN_PROGRESS'
       returning a.id
     ), attempts as (
       insert into webhook_delivery_attempts (id, delivery_id, endpoint_id, event_id, attempt_number, attempted_at, outcome, event_created_at)
       select gen_random_uuid(), bumped.id, ?, bumped.event_id, bumped.attempt_count, ?, 'IN_PROGRESS', bumped.event_created_at from bumped
       returning id, delivery_id
     ), lease as (
       -- Claimed: the lease is ours for one more round. Nothing claimed: give it back, unless requests are still out.
       -- Only recording: the lease stays as it is.
       update webhook_endpoints w
          set lease_holder = case when exists (select 1 from bumped) then ?::uuid end,
              lease_expires_at = case when exists (select 1 from bumped) then clock_timestamp() + (? * interval '1 millisecond') end
         from ep
        where w.id = ep.id and ? and not ep.busy
          and (exists (select 1 from bumped) or (ep.lease_holder is not null and not (? and ep.lease_holder = ?::uuid)))
       returning w.id
     )
     select case when row_number() over (order by c.event_seq, c.id) = 1 then r.recorded end as recorded, ep.status, ep.url, ep.secret_ciphertext, ep.previous_secret_ciphertext, ep.previous_secret_active, ep.busy, ep.in_flight, ep.ordered,
            c.id, c.event_id, c.attempt_number, c.retry_index, c.attempt_id, c.type, c.created_at, c.data, c.published_seq, c.event_created_at
       from (select string_agg(id::text, ',') as recorded from recorded) r
       left join ep on true
       left join (
         select bumped.id, bumped.event_id, bumped.attempt_count as attempt_number, bumped.retry_index, attempts.id as attempt_id,
                e.type, e.created_at, e.data, e.published_seq, bumped.event_seq, bumped.event_created_at::text as event_created_at
           from bumped join attempts on attempts.delivery_id = bumped.id join events e on e.id = bumped.event_id and e.created_at = bumped.event_created_at
       ) c on true
      order by c.event_seq, c.id`,
    [
      JSON.stringify(options.record),
      now,
      now,
      options.holder,
      options.endpointId,
      options.inFlight.length,
      TURN.min,
      TURN.rounds,
      options.turnClaimed,
      options.claim,
      now,
      `{${excluded.join(",")}}`,
      now,
      now,
      now,
      options.endpointId,
      now,
      options.holder,
      options.leaseMs,
      options.claim,
      options.inFlight.length > 0,
      options.holder,
    ],
  );
  const endpoint = rows[0]!;
  const recorded = new Set(endpoint.recorded?.split(",") ?? []);
  if (endpoint.status === null) return { recorded, claim: { kind: "idle" } };
  if (endpoint.busy) return { recorded, claim: { kind: "busy" } };
  if (endpoint.id === null) return { recorded, claim: { kind: "idle" } };
  const decrypt = (ciphertext: string) => {
    let secret = options.secretCache?.get(ciphertext);
    if (secret === undefined) {
      secret = signingKey(openSecret(options.secretsKey, options.endpointId, ciphertext));
      options.secretCache?.set(ciphertext, secret);
    }
    return secret;
  };
  const secrets = [decrypt(endpoint.secret_ciphertext)];
  if (endpoint.previous_secret_ciphertext && endpoint.previous_secret_active) secrets.push(decrypt(endpoint.previous_secret_ciphertext));
  return {
    recorded,
    claim: {
      kind: "claimed",
      endpoint: { url: endpoint.url, secrets, maxInFlight: endpoint.in_flight, ordered: endpoint.ordered },
      deliveries: rows.map((due) => ({
        deliveryId: due.id!,
        attemptId: due.attempt_id,
        attemptNumber: due.attempt_number,
        retryIndex: due.retry_index,
        endpointId: options.endpointId,
        eventId: due.event_id,
        eventCreatedAt: due.event_created_at,
        url: endpoint.url,
        secrets,
        body: eventBody({ id: due.event_id, type: due.type, createdAt: new Date(due.created_at), data: due.data, publishedSeq: due.published_seq }),
      })),
    },
  };
}

/** Gives the endpoint back before the lease would expire (end of a worker's turn). */
export async function releaseEndpoint(ctx: UseCaseContext, endpointId: string, holder: string): Promise<void> {
  await ctx.em.execute("update webhook_endpoints set lease_holder = null, lease_expires_at = null where id = ? and lease_holder = ?", [endpointId, holder]);
}

export const newLeaseHolder = (): string => randomUUID();

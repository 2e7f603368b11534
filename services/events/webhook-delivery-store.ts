import type { EntityManager } from "@mikro-orm/postgresql";
import { runPreparedInIndexOrder } from "../platform/database/index-only-reads.ts";
import { poolOf, statementFor } from "../platform/database/prepared.ts";
import { oldestOf } from "../platform/observability/due-work.ts";
import { sqlStatus } from "../platform/status-machine.ts";
import { deliveryMachine } from "./delivery-status.ts";
import { endpointMachine } from "./endpoint-status.ts";

/**
 * The SQL of webhook deliveries and their attempts (webhook_deliveries,
 * webhook_delivery_attempts). Each function runs on the caller's entity
 * manager, so in the caller's transaction, except the claim
 * (recordAnswersAndClaimDue): a named statement of its own, on the pool. The
 * claim, the relay's insert and the answer's record are the hot path
 * benchmarked against a bare baseline (docs/benchmarks.md, B7).
 */

// The statuses these statements name, checked against their machines when the module loads.
const PENDING = sqlStatus(deliveryMachine.statuses, "PENDING");
const FAILED = sqlStatus(deliveryMachine.statuses, "FAILED");
const ENABLED = sqlStatus(endpointMachine.statuses, "ENABLED");

/** One answer as the batch record writes it (recordAnswersAndClaimDue; built by record-attempt.ts). */
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

/** One row of recordAnswersAndClaimDue: the endpoint's columns, and the claimed delivery of the row. */
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
  created_at: Date;
  event_created_at: string;
  data: Record<string, unknown>;
  published_seq: string | null;
}

interface RecordAndClaimInput {
  endpointId: string;
  holder: string;
  leaseMs: number;
  now: Date;
  /** Answers to record first. */
  record: readonly AttemptRecordItem[];
  /** Claim more (false: only record, and keep the lease while requests are out). */
  claim: boolean;
  /** How many requests of this holder are still on their way. */
  inFlight: number;
  /** Deliveries never to claim (the requests still out, and the answers recorded by this statement). */
  excluded: readonly string[];
  /** Deliveries already claimed in this worker's turn; `turn` bounds the turn (at least `min`, `rounds` of max_in_flight). */
  turnClaimed: number;
  turn: { readonly min: number; readonly rounds: number };
}

/**
 * Records the answers that came back (if any) and takes the endpoint's next
 * due deliveries, in event order, in one statement: one round trip and one
 * commit per batch of answers, whatever its size (its own, outside any
 * transaction of `em`).
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
export async function recordAnswersAndClaimDue(em: EntityManager, input: RecordAndClaimInput): Promise<ClaimRow[]> {
  const { now } = input;
  const statement = statementFor(em, "webhooks.record-and-claim.index-order", () => RECORD_AND_CLAIM);
  return runPreparedInIndexOrder<ClaimRow>(await poolOf(em), statement, [
    JSON.stringify(input.record),
    input.record.map((r) => r.attempt_id),
    input.record.map((r) => r.event_created_at),
    now,
    input.holder,
    input.endpointId,
    input.inFlight,
    input.turn.min,
    input.turn.rounds,
    input.turnClaimed,
    input.claim,
    input.excluded,
    input.leaseMs,
    input.record.map((r) => r.delivery_id),
    "PENDING",
  ]);
}

/**
 * recordAnswersAndClaimDue's text: a named statement, parsed once per
 * connection (and, after a few runs, planned once: re-planned every time it
 * cost more than its execution). The answered rows are found by their
 * primary keys (`= any`: the attempts' and the deliveries' ids; the claim
 * index by endpoint walked every pending entry of the endpoint when the
 * planner took the partition for tiny) and every join to a delivery or an
 * attempt names its partition key, as the range of the answers' (an array
 * for each column of one index is probed pair by pair, n² probes:
 * partition-key-range.ts). It runs planned in index order
 * (runPreparedInIndexOrder): the due rows come from the partitions' claim
 * indexes merged, never from a sort of the endpoint's whole backlog. The
 * record's and the claim's re-checks of the status take it as a parameter
 * ($15, 'PENDING'), not a literal: a literal lets the planner serve them from
 * the partial indexes of pending rows, and with a partition's statistics
 * missing (a new month, a backlog built faster than autovacuum analyzes) the
 * plan it keeps for the connection walked every pending row of the month once
 * per answer (20,510 rows for ten); with the parameter only the primary key
 * can find them. Only the claim's own scan (`due`) names the literal, to use
 * the claim index. The answered ids are this holder's own claims on this
 * endpoint (claim-delivery.ts), so the record does not name the endpoint:
 * as a condition it would offer the planner the endpoint's indexes to walk.
 * Without them the planner cannot know how many rows the jsonb input
 * holds (it guesses 100), and with the join alone it read a whole month's
 * attempts (a sequential scan of the partition) and every pending delivery
 * for each batch of answers.
 */
const RECORD_AND_CLAIM = `with input as (
       select * from jsonb_to_recordset($1::jsonb) as x(attempt_id uuid, delivery_id uuid, event_created_at timestamptz, attempt_number int, outcome text, status_code int,
         error text, duration_ms int, excerpt text, next_status text, next_attempt_at timestamptz, retry_index int)
     ), answered as (
       update webhook_delivery_attempts a
          set outcome = i.outcome, status_code = i.status_code, error = i.error, duration_ms = i.duration_ms, response_excerpt = i.excerpt
         from input i
        where a.id = any($2::uuid[]) and a.event_created_at between (select min(k) from unnest($3::timestamptz[]) k) and (select max(k) from unnest($3::timestamptz[]) k)
          and a.id = i.attempt_id and a.event_created_at = i.event_created_at and a.outcome = 'IN_PROGRESS'
       returning a.id
     ), recorded as (
       update webhook_deliveries d
          set status = i.next_status, next_attempt_at = i.next_attempt_at, retry_index = i.retry_index,
              last_status_code = i.status_code, last_error = i.error, updated_at = $4
         from input i
        where d.id = any($14::uuid[])
          and d.event_created_at between (select min(k) from unnest($3::timestamptz[]) k) and (select max(k) from unnest($3::timestamptz[]) k)
          and d.id = i.delivery_id and d.event_created_at = i.event_created_at and d.attempt_count = i.attempt_number and d.status = $15::text
       returning d.id
     ), ep as (
       select id, status, url, secret_ciphertext, previous_secret_ciphertext,
              coalesce(previous_secret_expires_at > $4, false) as previous_secret_active,
              lease_holder, coalesce(lease_expires_at > clock_timestamp(), false) and lease_holder is distinct from $5::uuid as busy,
              case when ordered then 1 else max_in_flight end as in_flight, ordered
         from webhook_endpoints where id = $6 for no key update
     ), mine as (
       select ep.id, greatest(1, least(ep.in_flight - $7::int, greatest($8::int, $9::int * ep.in_flight) - $10::int)) as batch
         from ep where $11::boolean and ep.status = ${ENABLED} and not ep.busy
     ), due as (
       select d.id, d.event_id, d.attempt_count, d.retry_index, d.event_seq, d.event_created_at
         from mine cross join lateral (
           select d.id, d.event_id, d.attempt_count, d.retry_index, d.event_seq, d.event_created_at
             from webhook_deliveries d
            where d.endpoint_id = mine.id and d.status = ${PENDING} and d.next_attempt_at <= $4 and d.id <> all($12::uuid[])
            order by d.event_seq, d.id
            limit mine.batch
         ) d
     ), bumped as (
       update webhook_deliveries w set attempt_count = due.attempt_count + 1, last_attempt_at = $4, updated_at = $4
         from due
        where w.id = due.id and w.event_created_at = due.event_created_at
          and w.status = $15::text and w.attempt_count = due.attempt_count and w.next_attempt_at <= $4
       returning w.id, w.event_id, w.attempt_count, w.retry_index, w.event_seq, w.event_created_at
     ), interrupted as (
       update webhook_delivery_attempts a
          set outcome = 'INTERRUPTED', error = 'the worker stopped before the answer was recorded'
         from bumped
        where a.delivery_id = bumped.id and a.event_created_at = bumped.event_created_at and bumped.attempt_count > 1 and a.outcome = 'IN_PROGRESS'
       returning a.id
     ), attempts as (
       insert into webhook_delivery_attempts (id, delivery_id, endpoint_id, event_id, attempt_number, attempted_at, outcome, event_created_at)
       select gen_random_uuid(), bumped.id, $6, bumped.event_id, bumped.attempt_count, $4, 'IN_PROGRESS', bumped.event_created_at from bumped
       returning id, delivery_id
     ), lease as (
       -- Claimed: the lease is ours for one more round. Nothing claimed: give it back, unless requests are still out.
       -- Only recording: the lease stays as it is.
       update webhook_endpoints w
          set lease_holder = case when exists (select 1 from bumped) then $5::uuid end,
              lease_expires_at = case when exists (select 1 from bumped) then clock_timestamp() + ($13 * interval '1 millisecond') end
         from ep
        where w.id = ep.id and $11::boolean and not ep.busy
          and (exists (select 1 from bumped) or (ep.lease_holder is not null and not ($7::int > 0 and ep.lease_holder = $5::uuid)))
       returning w.id
     )
     select case when row_number() over (order by c.event_seq, c.id) = 1 then r.recorded end as recorded, ep.status, ep.url, ep.secret_ciphertext, ep.previous_secret_ciphertext, ep.previous_secret_active, ep.busy, ep.in_flight, ep.ordered,
            c.id, c.event_id, c.attempt_number, c.retry_index, c.attempt_id, c.type, c.created_at, c.data, c.published_seq, c.event_created_at
       from (select string_agg(id::text, ',') as recorded from recorded) r
       left join ep on true
       left join (
         select bumped.id, bumped.event_id, bumped.attempt_count as attempt_number, bumped.retry_index, attempts.id as attempt_id,
                e.type, e.created_at, e.data, f.published_seq, bumped.event_seq, bumped.event_created_at::text as event_created_at
           from bumped join attempts on attempts.delivery_id = bumped.id join events e on e.id = bumped.event_id and e.created_at = bumped.event_created_at
           left join event_feed f on f.event_id = bumped.event_id and f.event_created_at = bumped.event_created_at
       ) c on true
      order by c.event_seq, c.id`;

/** A delivery the relay plans: one per event and subscribed enabled endpoint. */
interface PlannedDelivery {
  id: string;
  merchant_id: string;
  event_id: string;
  endpoint_id: string;
  event_seq: string;
  /** The event's created_at as Postgres text (exact): the delivery's partition key. */
  event_created_at: string;
}

export interface CreatedDelivery {
  id: string;
  endpoint_id: string;
  event_seq: string;
}

/**
 * Inserts the relay's deliveries PENDING, due `now`; `on conflict do nothing`:
 * relaying an event twice creates nothing twice. Returns the ones created.
 */
export function insertFirstDeliveries(em: EntityManager, planned: readonly PlannedDelivery[], now: Date): Promise<CreatedDelivery[]> {
  return em.execute<CreatedDelivery[]>(
    `insert into webhook_deliveries (id, merchant_id, event_id, endpoint_id, event_seq, status, attempt_count, retry_index, next_attempt_at, created_at, updated_at, event_created_at)
             select t.id, t.merchant_id, t.event_id, t.endpoint_id, t.event_seq, ${PENDING}, 0, 0, ?, ?, ?, t.event_created_at
               from jsonb_to_recordset(?::jsonb) as t(id uuid, merchant_id uuid, event_id uuid, endpoint_id uuid, event_seq bigint, event_created_at timestamptz)
             on conflict (event_id, endpoint_id, event_created_at) do nothing
             returning id, endpoint_id, event_seq`,
    [now, now, now, JSON.stringify(planned)],
  );
}

/** One answer to one attempt, as recordAttempt writes it. */
interface AnswerRecord {
  attemptId: string;
  deliveryId: string;
  /** The partition key of the delivery and the attempt. */
  eventCreatedAt: string;
  /** The answered attempt: the delivery moves only if it is still at it. */
  attemptNumber: number;
  outcome: "SUCCEEDED" | "FAILED";
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  excerpt: string | null;
  nextStatus: string;
  nextAttemptAt: Date | null;
  retryIndex: number;
  now: Date;
}

/**
 * Writes the attempt's answer and moves the delivery, in one statement; true
 * if the delivery moved. The delivery is only moved if it is still at this
 * attempt (`attempt_count` guard): a stale worker cannot overwrite a newer
 * attempt (false: only its attempt row was written).
 */
export async function recordAnswer(em: EntityManager, answer: AnswerRecord): Promise<boolean> {
  const moved = await em.execute<{ id: string }[]>(
    `with attempt as (
         update webhook_delivery_attempts set outcome = ?, status_code = ?, error = ?, duration_ms = ?, response_excerpt = ?
          where id = ? and event_created_at = ? and outcome = 'IN_PROGRESS' returning id
       )
       update webhook_deliveries set status = ?, next_attempt_at = ?, retry_index = ?, last_status_code = ?, last_error = ?, updated_at = ?
        where id = ? and event_created_at = ? and attempt_count = ? and status = ${PENDING}
       returning id`,
    [
      answer.outcome,
      answer.statusCode,
      answer.error,
      answer.durationMs,
      answer.excerpt,
      answer.attemptId,
      answer.eventCreatedAt,
      answer.nextStatus,
      answer.nextAttemptAt,
      answer.retryIndex,
      answer.statusCode,
      answer.error,
      answer.now,
      answer.deliveryId,
      answer.eventCreatedAt,
      answer.attemptNumber,
    ],
  );
  return moved.length > 0;
}

/**
 * Makes the event's delivery to the endpoint due now with a fresh retry
 * schedule (creating it if there was none), whatever its state; returns its id.
 */
export async function redeliver(
  em: EntityManager,
  delivery: { id: string; merchantId: string; eventId: string; endpointId: string; eventSeq: string; eventCreatedAt: string; status: string; now: Date },
): Promise<string> {
  const { now } = delivery;
  const [row] = await em.execute<{ id: string }[]>(
    `insert into webhook_deliveries (id, merchant_id, event_id, endpoint_id, event_seq, status, attempt_count, retry_index, next_attempt_at, created_at, updated_at, event_created_at)
         values (?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?)
         on conflict (event_id, endpoint_id, event_created_at) do update set status = excluded.status, retry_index = 0, next_attempt_at = excluded.next_attempt_at, updated_at = excluded.updated_at
         returning id`,
    [delivery.id, delivery.merchantId, delivery.eventId, delivery.endpointId, delivery.eventSeq, delivery.status, now, now, now, delivery.eventCreatedAt],
  );
  return row!.id;
}

/** Ends the endpoint's pending deliveries as FAILED: the endpoint was deleted, nothing will be sent to it again. */
export async function failPendingDeliveriesOfDeletedEndpoint(em: EntityManager, endpointId: string, now: Date): Promise<void> {
  await em.execute(
    `update webhook_deliveries set status = ${FAILED}, next_attempt_at = null, last_error = 'the webhook endpoint was deleted', updated_at = ?
        where endpoint_id = ? and status = ${PENDING}`,
    [now, endpointId],
  );
}

/**
 * Per enabled endpoint that nobody is sending to (no live lease), its first
 * PENDING delivery whose next attempt has come at `now` (service clock), in
 * event order; at most `limit` endpoints.
 */
export function firstDueDeliveryPerIdleEndpoint(
  em: EntityManager,
  now: Date,
  limit: number,
): Promise<{ id: string; endpoint_id: string; attempt_count: number }[]> {
  return em.execute<{ id: string; endpoint_id: string; attempt_count: number }[]>(
    `select distinct on (d.endpoint_id) d.id, d.endpoint_id, d.attempt_count
       from webhook_deliveries d
       join webhook_endpoints w on w.id = d.endpoint_id
      where d.status = ${PENDING} and d.next_attempt_at <= ?
        and w.status = ${ENABLED} and (w.lease_expires_at is null or w.lease_expires_at < clock_timestamp())
      order by d.endpoint_id, d.event_seq, d.id
      limit ?`,
    [now, limit],
  );
}

/** When the oldest delivery due at `now` on an enabled endpoint became due (a disabled endpoint waits on purpose: not counted). */
export function oldestDueDeliveryAt(em: EntityManager, now: Date): Promise<Date | null> {
  return oldestOf(
    em,
    `select min(d.next_attempt_at) as oldest from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
          where d.status = ${PENDING} and d.next_attempt_at <= ? and w.status = ${ENABLED}`,
    [now],
  );
}

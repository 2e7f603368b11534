import type { EntityManager } from "@mikro-orm/postgresql";
import { oldestOf } from "../platform/observability/due-work.ts";
import { UTC_MICROS } from "../platform/database/partition-key-range.ts";
import { sqlStatus, statusIn } from "../platform/status-machine.ts";
import type { EmailKind } from "./contract.ts";
import { DUE_EMAIL_STATUSES, EMAIL_STATUSES } from "./email-status.ts";

/**
 * The SQL of the customer emails outbox (customer_emails), and of the emails
 * collector's own reads of the tables it is filled from: the events' outbox
 * rows of consumer 'emails' are the collector's (migration 0038), and the subscription
 * facts an email shows are read in bulk. (The events and subscriptions
 * domains publish no store to other domains: a domain reaches another's
 * modules only through its contract, so these statements live here.) Each
 * function runs on the caller's entity manager, so in its transaction.
 */

// The statuses these statements write and fence on, checked against the table's list when the module loads.
const PENDING = sqlStatus(EMAIL_STATUSES, "PENDING");
const SENDING = sqlStatus(EMAIL_STATUSES, "SENDING");
const SENT = sqlStatus(EMAIL_STATUSES, "SENT");
const PARKED = sqlStatus(EMAIL_STATUSES, "PARKED");

/** An email-worthy event, as the collector decides on it. */
export interface EmailEvent {
  id: string;
  /** Its place in the outbox (the events' seq). */
  seq: string;
  merchant_id: string;
  type: string;
  data: any;
  /** Its partition key, as fixed-width UTC text (partition-key-range.ts). */
  created_at: string;
}

/** An event named by its outbox key (as EmailEvent has it). */
type EventKey = Pick<EmailEvent, "id" | "seq">;

/**
 * The next email-worthy events (EMAIL_EVENT_TYPES) not yet collected, in seq
 * order: the outbox's rows of consumer 'emails' (the events' insert trigger
 * queues them), each with its event's data.
 */
export function uncollectedEmailEvents(em: EntityManager, limit: number): Promise<EmailEvent[]> {
  return em.execute<EmailEvent[]>(
    `select o.event_id as id, o.seq::text as seq, o.merchant_id, o.type, e.data, to_char(o.created_at at time zone 'UTC', ${UTC_MICROS}) as created_at
       from event_outbox o join events e on e.id = o.event_id and e.created_at = o.created_at
      where o.consumer = 'emails'
      order by o.seq limit ?`,
    [limit],
  );
}

/**
 * The collector's turn (pg advisory lock `lockId`, released at commit): true
 * if this transaction took it.
 */
export async function tryTakeCollectorTurn(em: EntityManager, lockId: number): Promise<boolean> {
  const [lock] = await em.execute<{ locked: boolean }[]>("select pg_try_advisory_xact_lock(?) as locked", [lockId]);
  return !!lock?.locked;
}

/**
 * Those of these events still not collected, row-locked (`skip locked`:
 * another collector's rows are left to it): their outbox rows, by key.
 */
export function lockUncollectedEvents(em: EntityManager, events: readonly EventKey[]): Promise<EventKey[]> {
  return em.execute<EventKey[]>(
    `select event_id as id, seq::text as seq from event_outbox
      where consumer = 'emails' and seq = any(string_to_array(?, ',')::bigint[])
      for update skip locked`,
    [events.map((e) => e.seq).join(",")],
  );
}

/** Marks the events collected: takes their rows out of the collector's outbox (named as lockUncollectedEvents names them). */
export async function markEventsCollected(em: EntityManager, events: readonly EventKey[]): Promise<void> {
  await em.execute("delete from event_outbox where consumer = 'emails' and seq = any(string_to_array(?, ',')::bigint[])", [events.map((e) => e.seq).join(",")]);
}

/**
 * Inserts the emails PENDING, due `now`; `on conflict do nothing` on (event,
 * recipient, kind): at most one however often the collector runs. Returns how
 * many were inserted.
 */
export async function insertEmails(em: EntityManager, rows: readonly Record<string, unknown>[], now: Date): Promise<number> {
  const ids = await em.execute<{ id: string }[]>(
    `insert into customer_emails (id, event_id, merchant_id, recipient, kind, subject, text_body, html_body, status, attempt_count, next_attempt_at, created_at, updated_at)
           select t.id, t.event_id, t.merchant_id, t.recipient, t.kind, t.subject, t.text, t.html, ${PENDING}, 0, ?, ?, ?
             from jsonb_to_recordset(?::jsonb) as t(id uuid, event_id uuid, merchant_id uuid, recipient text, kind text, subject text, text text, html text)
           on conflict (event_id, lower(recipient), kind) do nothing
           returning id`,
    [now, now, now, JSON.stringify(rows)],
  );
  return ids.length;
}

/** What an email shows of its subscription. */
interface SubscriptionFacts {
  id: string;
  wallet_user_id: string;
  plan_id: string;
  status: string;
  next_retry_at: Date | null;
}

/** The facts of these subscriptions (the unknown ones are left out). */
export function subscriptionFacts(em: EntityManager, subscriptionIds: readonly string[]): Promise<SubscriptionFacts[]> {
  return em.execute<SubscriptionFacts[]>(
    "select id, wallet_user_id, plan_id, status, next_retry_at from subscriptions where id = any(string_to_array(?, ',')::uuid[])",
    [subscriptionIds.join(",")],
  );
}

/** An email claimed for sending. */
export interface ClaimedEmail {
  id: string;
  recipient: string;
  kind: EmailKind;
  subject: string;
  text_body: string;
  html_body: string;
  attempt_count: number;
}

/**
 * Claims up to `limit` due emails in their own commit: SENDING, the attempt
 * counted, due again only at `leaseUntil` (a SENDING email whose sender died
 * is due again then).
 */
export function claimDueEmails(em: EntityManager, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedEmail[]> {
  return em.execute<ClaimedEmail[]>(
    `update customer_emails c set status = ${SENDING}, attempt_count = c.attempt_count + 1, next_attempt_at = ?, updated_at = ?
      where c.id in (select id from customer_emails where ${statusIn("status", DUE_EMAIL_STATUSES)} and next_attempt_at <= ?
                      order by next_attempt_at limit ? for update skip locked)
      returning c.id, c.recipient, c.kind, c.subject, c.text_body, c.html_body, c.attempt_count`,
    [leaseUntil, now, now, limit],
  );
}

/**
 * The marks of a send. Each is fenced on (SENDING, attempt): a sender whose
 * lease ran out cannot overwrite the next one's result.
 */
interface SendFence {
  id: string;
  attemptCount: number;
}

export async function markEmailSent(em: EntityManager, fence: SendFence, now: Date): Promise<void> {
  await em.execute(
    `update customer_emails set status = ${SENT}, sent_at = ?, last_error = null, updated_at = ? where id = ? and status = ${SENDING} and attempt_count = ?`,
    [now, now, fence.id, fence.attemptCount],
  );
}

/** Parked: never sent again (a permanent refusal, or the last attempt failed). */
export async function markEmailParked(em: EntityManager, fence: SendFence, error: string | null, now: Date): Promise<void> {
  await em.execute(`update customer_emails set status = ${PARKED}, last_error = ?, updated_at = ? where id = ? and status = ${SENDING} and attempt_count = ?`, [
    error,
    now,
    fence.id,
    fence.attemptCount,
  ]);
}

/** Due again at `retryAt`. */
export async function markEmailRetry(em: EntityManager, fence: SendFence, retryAt: Date, error: string | null, now: Date): Promise<void> {
  await em.execute(
    `update customer_emails set status = ${PENDING}, next_attempt_at = ?, last_error = ?, updated_at = ? where id = ? and status = ${SENDING} and attempt_count = ?`,
    [retryAt, error, now, fence.id, fence.attemptCount],
  );
}

/** The oldest email due and not sent, or the oldest email-worthy event not yet collected: when it became due. */
export function oldestDueEmailWorkAt(em: EntityManager, now: Date): Promise<Date | null> {
  return oldestOf(
    em,
    `select least(
           (select min(next_attempt_at) from customer_emails where ${statusIn("status", DUE_EMAIL_STATUSES)} and next_attempt_at <= ?),
           (select min(created_at) from event_outbox where consumer = 'emails' and created_at <= ?)
         ) as oldest`,
    [now, now],
  );
}

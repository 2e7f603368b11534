import { createHash } from "node:crypto";
import { LockMode } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { asEntityRows, insertRow, poolOf, runPrepared, selectColumns, statementFor } from "../platform/database/prepared.ts";
import { committedWithout } from "../platform/database/commit-pokes.ts";
import { readBatched, readByIds } from "../platform/database/batched-reads.ts";
import { Event } from "../events/entities.ts";
import { Subscription, SubscriptionAuthorization, SubscriptionCharge, type AuthorizationRow, type ChargeRow, type SubscriptionRow } from "./entities.ts";
import { noteAuditObject } from "../platform/audit/call-context.ts";
import { auditEntryInsert, owedAuditEntry } from "../platform/audit/audit-writer.ts";
import { oldestOf } from "../platform/observability/due-work.ts";
import { BUMP_VERSION } from "../platform/record-version.ts";
import { AUTHORIZATION_EXPIRED } from "./due-predicates.ts";
import { BILLED_STATUSES, nextStatus } from "./status-machine.ts";
import { sqlStatus, statusIn } from "../platform/status-machine.ts";
import { authorizationMachine } from "./authorization-status.ts";
import { chargeMachine } from "./charges/charge-status.ts";

/** Queries shared by the use cases; each use case owns its transaction. */

export const subscriptionNotFound = (id: string) => notFound("SUBSCRIPTION_NOT_FOUND", `subscription ${id} not found`);

/**
 * Who acts on a subscription: its merchant (API key) or its customer (the
 * self-service page, the wallet app). Anyone else's id is not found.
 */
export type SubscriptionOwner = { merchantId: string } | { walletUserId: string };

/**
 * The subscription row, locked (`select … for update`) until the transaction
 * ends: every status change goes through here, so two changes of one
 * subscription never interleave. Another merchant's (or customer's) id is not found.
 */
export async function lockSubscription(em: EntityManager, id: string, owner?: string | SubscriptionOwner): Promise<SubscriptionRow> {
  const scope = typeof owner === "string" ? { merchantId: owner } : (owner ?? {});
  const sub = isUuid(id) ? await em.findOne(Subscription, { id, ...scope }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true }) : null;
  if (!sub) throw subscriptionNotFound(id);
  // Customer actions name the subscription but not its merchant: the audit entry learns it here.
  noteAuditObject("Subscription", sub);
  return sub;
}

export async function findSubscription(em: EntityManager, id: string, merchantId: string): Promise<SubscriptionRow> {
  const sub = isUuid(id) ? await em.findOne(Subscription, { id, merchantId }) : null;
  if (!sub) throw subscriptionNotFound(id);
  return sub;
}

/** The latest authorization of a subscription (there is one today; change sessions may add more kinds later). */
export async function currentAuthorization(em: EntityManager, subscriptionId: string): Promise<AuthorizationRow | null> {
  return em.findOne(SubscriptionAuthorization, { subscriptionId }, { orderBy: { createdAt: "desc", id: "desc" } });
}

/**
 * The merchant's live subscription with this externalReference (live as the
 * unique index subscriptions_merchant_external_live_key says: not cancelled or
 * expired; at most one), with its current authorization, read fresh.
 */
export async function liveSubscriptionByReference(
  em: EntityManager,
  merchantId: string,
  externalReference: string,
): Promise<{ subscription: SubscriptionRow; authorization: AuthorizationRow | null } | null> {
  const subscription = await em.findOne(Subscription, { merchantId, externalReference, status: { $nin: ["CANCELLED", "EXPIRED"] } }, { refresh: true });
  return subscription ? { subscription, authorization: await currentAuthorization(em, subscription.id) } : null;
}

/**
 * Current authorizations of many subscriptions in one query (lists, renewal
 * batches), on the connection of `em` (its transaction, if any). Plain rows
 * shaped like the entity, for reading only: callers build records from them,
 * and a managed entity would cost its hydration and a comparison at every
 * flush of the transaction.
 */
export async function currentAuthorizations(em: EntityManager, subscriptionIds: string[]): Promise<Map<string, AuthorizationRow>> {
  const byId = new Map<string, AuthorizationRow>();
  if (subscriptionIds.length === 0) return byId;
  const rows = await em.execute<Record<string, unknown>[]>(
    `select distinct on (a.subscription_id) ${selectColumns(em, SubscriptionAuthorization, "a")}
       from subscription_authorizations a
      where a.subscription_id in (${subscriptionIds.map(() => "?").join(", ")})
      order by a.subscription_id, a.created_at desc, a.id desc`,
    subscriptionIds,
  );
  for (const row of asEntityRows<AuthorizationRow>(em, SubscriptionAuthorization, rows)) byId.set(row.subscriptionId, row);
  return byId;
}

/** The first payment's attempt that is still in flight, if any (at most one: a unique index says so). */
export async function pendingFirstCharge(em: EntityManager, subscriptionId: string): Promise<ChargeRow | null> {
  return em.findOne(SubscriptionCharge, { subscriptionId, periodIndex: 0, status: "PENDING" }, { refresh: true });
}

/**
 * findSubscription + currentAuthorization for a set of (id, merchant) keys in
 * one prepared statement: the merchant GETs of one event-loop turn
 * (readBatched). Another merchant's id matches no key.
 */
const subscriptionsWithAuthorization = readByIds<Record<string, unknown>>(
  "subscriptions.find_with_authorization",
  (em) => {
    const columns = withAuthorizationColumns(em, "s", "a");
    return `select ${columns.subscription}, ${columns.authorization}
              from subscriptions s
              left join lateral (
                select * from subscription_authorizations
                 where subscription_id = s.id
                 order by created_at desc, id desc
                 limit 1
              ) a on true
             where s.id = any($1::uuid[]) and s.merchant_id = any($2::uuid[])`;
  },
  "merchantId",
);

const AUTHORIZATION_PREFIX = "authorization.";

/**
 * findSubscription + currentAuthorization in one round trip: the merchant's
 * GET, read together with the other GETs of its event-loop turn
 * (subscriptionsWithAuthorization). Outside any transaction; the rows are
 * plain objects shaped like the entities (not managed by `em`), for reading
 * only. Another merchant's id is not found.
 */
export async function readSubscriptionWithAuthorization(
  em: EntityManager,
  id: string,
  merchantId: string,
): Promise<{ subscription: SubscriptionRow; authorization: AuthorizationRow | null }> {
  if (!isUuid(id)) throw subscriptionNotFound(id);
  const row = await readBatched(em, subscriptionsWithAuthorization, { id, owner: merchantId });
  if (!row) throw subscriptionNotFound(id);
  return splitWithAuthorization(row);
}

/**
 * The columns of a subscription and of its authorization in one row, as
 * selectColumns(…, AUTHORIZATION_PREFIX) names the latter: `returning` or
 * `select` lists for statements that read both at once.
 */
function withAuthorizationColumns(em: EntityManager, subscriptionAlias: string, authorizationAlias: string): { subscription: string; authorization: string } {
  return {
    subscription: selectColumns(em, Subscription, subscriptionAlias),
    authorization: selectColumns(em, SubscriptionAuthorization, authorizationAlias, AUTHORIZATION_PREFIX),
  };
}

/**
 * One row of withAuthorizationColumns, split into the two (no authorization
 * when its columns are null). Rows read through the ORM's own connection
 * (`em.execute`) hand timestamps back as text: given `em`, they become Dates
 * as the ORM hydrates them (asEntityRows).
 */
function splitWithAuthorization(row: Record<string, unknown>, em?: EntityManager): { subscription: SubscriptionRow; authorization: AuthorizationRow | null } {
  const subscription: Record<string, unknown> = {};
  const authorization: Record<string, unknown> = {};
  for (const key in row) {
    if (key.startsWith(AUTHORIZATION_PREFIX)) authorization[key.slice(AUTHORIZATION_PREFIX.length)] = row[key];
    else subscription[key] = row[key];
  }
  const hasAuthorization = authorization.id != null;
  if (em) {
    asEntityRows(em, Subscription, [subscription]);
    if (hasAuthorization) asEntityRows(em, SubscriptionAuthorization, [authorization]);
  }
  return {
    subscription: subscription as SubscriptionRow,
    authorization: hasAuthorization ? (authorization as AuthorizationRow) : null,
  };
}

/**
 * A new subscription, its authorization, its outbox event and the call's
 * audit entry (when one is owed) in one statement: one round trip, atomic on
 * its own (a statement is its own transaction), so the event and the entry
 * commit with the change or not at all. The event is built by the outbox's
 * own builder (recordEvent) and announced after the commit as a flush would
 * (committedWithout). A duplicate live externalReference fails with the
 * partial unique index's 23505, as the ORM insert did.
 */
export async function insertNewSubscription(em: EntityManager, rows: { subscription: object; authorization: object; event: object }): Promise<void> {
  const sub = insertRow(em, Subscription, rows.subscription);
  const auth = insertRow(em, SubscriptionAuthorization, rows.authorization, 1 + sub.values.length);
  const event = insertRow(em, Event, rows.event, 1 + sub.values.length + auth.values.length);
  const owed = owedAuditEntry();
  const audit = owed && auditEntryInsert(owed.fields, 1 + sub.values.length + auth.values.length + event.values.length);
  // One named statement per shape of the rows (the columns each sets, with or without the entry). Foreign keys
  // are checked at the end of the statement, so the CTEs' order does not matter.
  const statement = statementFor(
    em,
    `subscriptions.create.${shortHash(`${sub.signature} ${auth.signature} ${event.signature} ${audit ? "audited" : ""}`)}`,
    () => `with s as (${sub.sql}), a as (${auth.sql}), e as (${event.sql})${audit ? `, au as (${audit.sql})` : ""} select 1`,
  );
  await runPrepared(await poolOf(em), statement, [...sub.values, ...auth.values, ...event.values, ...(audit?.values ?? [])]);
  owed?.written();
  committedWithout(em, Event.meta.className);
}

/** A statement's name stays short (it travels with every execution); its shape is in the hash. */
const shortHash = (text: string) => createHash("sha1").update(text).digest("hex").slice(0, 12);

/** The plan a subscription is on now. */
export async function planIdOf(em: EntityManager, subscriptionId: string): Promise<string> {
  return (await em.execute<{ plan_id: string }[]>("select plan_id from subscriptions where id = ?", [subscriptionId]))[0]!.plan_id;
}

/**
 * The subscriptions, locked in id order (the order every set lock takes, so
 * two sets never wait on each other in a cycle), as plain objects shaped like
 * the entity: no identity map, no change tracking.
 */
export async function lockSubscriptionRows(em: EntityManager, ids: readonly string[]): Promise<SubscriptionRow[]> {
  const rows = await em.execute<Record<string, unknown>[]>(
    `select ${selectColumns(em, Subscription, "s")} from subscriptions s where s.id in (${ids.map(() => "?").join(", ")}) order by s.id for update`,
    [...ids],
  );
  return asEntityRows<SubscriptionRow>(em, Subscription, rows);
}

/** A merchant's subscriptions that count on its dashboard (BILLED_STATUSES: ACTIVE, TRIALING, PAST_DUE), per plan and status. */
export function countLiveSubscriptionsByPlan(em: EntityManager, merchantId: string): Promise<{ plan_id: string; status: string; n: string }[]> {
  return em.execute<{ plan_id: string; status: string; n: string }[]>(
    `select plan_id, status, count(*) as n from subscriptions
      where merchant_id = ? and ${statusIn("status", BILLED_STATUSES)} group by plan_id, status`,
    [merchantId],
  );
}

/** An authorization claimed for expiry, and its subscription. */
export interface ClaimedAuthorization {
  authorizationId: string;
  subscriptionId: string;
}

/** A due authorization locked by the expiry sweep's walk; `expiresAt` as the database wrote it (text). */
interface DueAuthorization extends ClaimedAuthorization {
  expiresAt: string;
}

/** Where an expiry walk stands: the last authorization it locked, in (expires_at, id) order. */
export type ExpiryCursor = Pick<DueAuthorization, "expiresAt" | "authorizationId">;

// The statuses the expiry statements name, checked against their machines when the module loads.
const CHARGE_PENDING = sqlStatus(chargeMachine.statuses, "PENDING");
const CHARGE_SUCCEEDED = sqlStatus(chargeMachine.statuses, "SUCCEEDED");
const AUTHORIZATION_EXPIRED_STATUS = sqlStatus(authorizationMachine.statuses, "EXPIRED");

/**
 * What keeps a due authorization (alias `a`) from expiring that lives in
 * other rows: a newer authorization of its subscription, or a first payment
 * in flight or taken.
 */
const NOT_SUPERSEDED_OR_PAID = `not exists (select 1 from subscription_authorizations newer
                   where newer.subscription_id = a.subscription_id
                     and (newer.created_at, newer.id) > (a.created_at, a.id))
  and not exists (select 1 from subscription_charges c
                   where c.subscription_id = a.subscription_id and c.period_index = 0 and c.status in (${CHARGE_PENDING}, ${CHARGE_SUCCEEDED}))`;

/**
 * The expiry walk's first lock: up to `limit` due authorizations after
 * `after`, in (expires_at, id) order, skipping rows another transaction
 * holds. One table only, so its plan does not hang on statistics: joined to
 * subscriptions with a status filter, a table bulk-filled since its last
 * ANALYZE (every expiry sweep right after a burst of creates, any table
 * after a restore) was planned as a cross product, 10,000 due took 28 s a
 * claim and the sweep never got past its statement timeout. The cursor
 * makes every row of the walk read once, even those the re-check keeps.
 */
export async function lockDueAuthorizations(em: EntityManager, now: Date, limit: number, after: ExpiryCursor | null): Promise<DueAuthorization[]> {
  const rows = await em.execute<{ id: string; subscription_id: string; expires_at: string }[]>(
    `select a.id, a.subscription_id, a.expires_at
       from subscription_authorizations a
      where ${AUTHORIZATION_EXPIRED("a")}${after ? " and (a.expires_at, a.id) > (?, ?)" : ""}
      order by a.expires_at, a.id
      limit ?
      for update skip locked`,
    [now, ...(after ? [after.expiresAt, after.authorizationId] : []), limit],
  );
  return rows.map((r) => ({ authorizationId: r.id, subscriptionId: r.subscription_id, expiresAt: r.expires_at }));
}

/**
 * The expiry walk's second lock: those of `ids` still awaiting approval,
 * skipping rows another transaction holds (an approval in progress). Taken
 * after the authorizations' locks; neither lock ever waits, so the order
 * cannot deadlock with an approval's (subscription, then authorization).
 * Returns the ids locked; while this transaction holds them their status
 * cannot move.
 */
export async function lockSubscriptionsAwaitingApproval(em: EntityManager, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await em.execute<{ id: string }[]>(
    `select s.id from subscriptions s where s.id in (${ids.map(() => "?").join(", ")}) and s.status = ? for update skip locked`,
    [...ids, "PENDING_APPROVAL"],
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Expires, in one statement, those of the claimed authorizations (locked,
 * with their subscriptions awaiting approval, by the two statements above in
 * this transaction) that still qualify, with their subscriptions, and
 * returns them as written. A new statement, so (READ COMMITTED) a new
 * snapshot, taken while the locks are held: a first charge committed before
 * the claim locked the row is seen here. The subscription's status is not
 * read again: the lock holds it. The subscriptions' update returns the
 * authorizations beside them (a join of the two updates' results was a
 * nested loop over both, 250,000 comparisons a batch of 500).
 */
export async function expireAuthorizationsStillDue(
  em: EntityManager,
  claimed: readonly ClaimedAuthorization[],
  now: Date,
): Promise<{ subscription: SubscriptionRow; authorization: AuthorizationRow | null }[]> {
  const columns = withAuthorizationColumns(em, "s", "auths");
  const rows = await em.execute<Record<string, unknown>[]>(
    `with due as (
       select a.id from subscription_authorizations a
        where a.id in (${claimed.map(() => "?").join(", ")}) and ${AUTHORIZATION_EXPIRED("a")} and ${NOT_SUPERSEDED_OR_PAID}
     ), auths as (
       update subscription_authorizations a set status = ${AUTHORIZATION_EXPIRED_STATUS}, expired_at = ?
         from due where a.id = due.id
       returning a.*
     )
     update subscriptions s set status = ?, expired_at = ?, updated_at = ?, ${BUMP_VERSION}
       from auths where s.id = auths.subscription_id
     returning ${columns.subscription}, ${columns.authorization}`,
    [...claimed.map((c) => c.authorizationId), now, now, nextStatus("PENDING_APPROVAL", "expire"), now, now],
  );
  return rows.map((row) => splitWithAuthorization(row, em));
}

/** The expiry sweep's lag probe: when the oldest authorization still open past its expiry at `now` expired. */
export function oldestExpiredAuthorization(em: EntityManager, now: Date): Promise<Date | null> {
  return oldestOf(em, `select min(expires_at) as oldest from subscription_authorizations where ${AUTHORIZATION_EXPIRED()}`, [now]);
}

/**
 * The refunded subscription's version as it stands, for the refund's event:
 * read, not locked (a refund does not change the subscription, and the lock
 * order is subscription first).
 */
export async function refundedSubscriptionVersion(em: EntityManager, subscriptionId: string): Promise<number> {
  const [subject] = await em.execute<{ version: number }[]>("select version from subscriptions where id = ?", [subscriptionId]);
  return Number(subject!.version);
}

import type { KeyObject } from "node:crypto";
import { LockMode } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { DomainError, notFound } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { Subscription, SubscriptionCharge, type ChargeRow, type SubscriptionRow } from "../entities.ts";
import { SubscriptionChangeSession, type ChangeSessionRow } from "./change-session-entities.ts";
import { changeSessionToken, hashAuthorizationToken, looksLikeAuthorizationToken } from "../authorization-token.ts";
import { noteAuditObject } from "../../platform/audit/call-context.ts";
import { sqlStatus, statusIn } from "../../platform/status-machine.ts";
import { oldestOf } from "../../platform/observability/due-work.ts";
import { PLAN_CHANGE_DUE } from "../due-predicates.ts";
import { TERMINAL_STATUSES } from "../status-machine.ts";
import { changeSessionMachine } from "./change-session-status-machine.ts";
import { chargeMachine } from "../charges/charge-status.ts";

/** Queries shared by the change-session use cases; each use case owns its transaction. */

/** Statuses a subscription may change plan from. */
export const CHANGEABLE_STATUSES: readonly string[] = ["ACTIVE", "TRIALING", "PAUSED"];

const changeSessionNotFound = (id: string) => notFound("CHANGE_SESSION_NOT_FOUND", `change session ${id} not found`);

/** A session of one subscription of one merchant; anything else is not found. */
export async function findChangeSession(em: EntityManager, merchantId: string, subscriptionId: string, id: string): Promise<ChangeSessionRow> {
  const row = isUuid(id) && isUuid(subscriptionId) ? await em.findOne(SubscriptionChangeSession, { id, subscriptionId, merchantId }) : null;
  if (!row) throw changeSessionNotFound(id);
  return row;
}

/** The session, locked until the transaction ends. Lock order everywhere: subscription, session, charge. */
export async function lockChangeSession(em: EntityManager, id: string): Promise<ChangeSessionRow> {
  return em.findOneOrFail(SubscriptionChangeSession, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

/** The session a hosted-page token names and its subscription; CHANGE_SESSION_NOT_FOUND otherwise. */
export async function findByChangeToken(em: EntityManager, token: string): Promise<{ session: ChangeSessionRow; subscription: SubscriptionRow }> {
  const session = looksLikeAuthorizationToken(token)
    ? await em.findOne(SubscriptionChangeSession, { tokenHash: hashAuthorizationToken(token) }, { refresh: true })
    : null;
  if (!session) throw notFound("CHANGE_SESSION_NOT_FOUND", "this approval link is not valid");
  const subscription = await em.findOneOrFail(Subscription, { id: session.subscriptionId }, { refresh: true });
  // The customer acts by token: the audit entry learns the change session and merchant here.
  noteAuditObject("SubscriptionChangeSession", { id: session.id, merchantId: subscription.merchantId });
  return { session, subscription };
}

/** PENDING_APPROVAL reads EXPIRED the moment expiresAt passes on the service clock, even before the expiry job ran. */
export function effectiveChangeStatus(session: ChangeSessionRow, now: Date): ChangeSessionRow["status"] {
  return session.status === "PENDING_APPROVAL" && session.expiresAt.getTime() <= now.getTime() ? "EXPIRED" : session.status;
}

/**
 * Throws unless the customer may still answer the session. The codes are the
 * hosted pages' (shared with subscription authorizations), so the same page
 * shows "expired", "cancelled" or "already used".
 */
export function assertChangeAnswerable(session: ChangeSessionRow, now: Date): void {
  const status = effectiveChangeStatus(session, now);
  if (status === "EXPIRED") throw new DomainError("failed_precondition", "AUTHORIZATION_EXPIRED", "this approval link has expired");
  if (status === "CANCELLED") throw new DomainError("failed_precondition", "AUTHORIZATION_CANCELLED", "the merchant cancelled this change");
  if (status !== "PENDING_APPROVAL") throw new DomainError("failed_precondition", "AUTHORIZATION_USED", "this approval link has already been used");
}

/** The immediate charge of a session still in flight, if any (at most one: a unique index says so). */
export async function pendingSessionCharge(em: EntityManager, changeSessionId: string): Promise<ChargeRow | null> {
  return em.findOne(SubscriptionCharge, { changeSessionId, status: "PENDING" }, { refresh: true });
}

export async function openSessionOf(em: EntityManager, subscriptionId: string): Promise<ChangeSessionRow | null> {
  return em.findOne(SubscriptionChangeSession, { subscriptionId, status: "PENDING_APPROVAL" }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

export async function scheduledSessionOf(em: EntityManager, subscriptionId: string): Promise<ChangeSessionRow | null> {
  return em.findOne(SubscriptionChangeSession, { subscriptionId, status: "SCHEDULED" }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

export const changeApprovalUrl = (publicBaseUrl: string, token: string) => `${publicBaseUrl}/change/${token}`;

/**
 * The approval URL of a session still awaiting the customer (undefined once it
 * was answered, expired or cancelled, and for a session whose token was not
 * derived from its id).
 */
export function openApprovalUrl(publicBaseUrl: string, linkKey: KeyObject, session: ChangeSessionRow): string | undefined {
  if (session.status !== "PENDING_APPROVAL") return undefined;
  const { token, hash } = changeSessionToken(linkKey, session.id);
  return hash === session.tokenHash ? changeApprovalUrl(publicBaseUrl, token) : undefined;
}

/**
 * Up to `limit` scheduled changes whose billing date has come at `now`, the
 * earliest first (PLAN_CHANGE_DUE: applied only to a subscription billed on
 * or after the date).
 */
export async function duePlanChangeIds(em: EntityManager, now: Date, limit: number): Promise<string[]> {
  const due = await em.execute<{ id: string }[]>(
    `select cs.id from subscription_change_sessions cs join subscriptions s on s.id = cs.subscription_id
      where ${PLAN_CHANGE_DUE("cs", "s")}
      order by cs.scheduled_for limit ?`,
    [now, now, limit],
  );
  return due.map((r) => r.id);
}

/** Up to `limit` sessions still awaiting approval past their expiry at `now`, the earliest first. */
export async function expiredChangeSessionIds(em: EntityManager, now: Date, limit: number): Promise<string[]> {
  const due = await em.execute<{ id: string }[]>(
    `select id from subscription_change_sessions where ${statusIn("status", changeSessionMachine.statesFrom("expire"))} and expires_at <= ? order by expires_at limit ?`,
    [now, limit],
  );
  return due.map((r) => r.id);
}

/**
 * Up to 200 ended subscriptions (CANCELLED, EXPIRED) that still have a change
 * session the cancel would have ended: the sweep's safety net for
 * subscriptions that ended by another path than the merchant's cancel.
 */
export async function endedSubscriptionsWithLiveChangeSessions(em: EntityManager): Promise<string[]> {
  const rows = await em.execute<{ subscription_id: string }[]>(
    `select distinct cs.subscription_id from subscription_change_sessions cs join subscriptions s on s.id = cs.subscription_id
      where ${statusIn("cs.status", changeSessionMachine.statesFrom("cancel"))} and ${statusIn("s.status", TERMINAL_STATUSES)} limit 200`,
  );
  return rows.map((r) => r.subscription_id);
}

/** The highest attempt number of a session's immediate charge so far (0 before the first). */
export async function lastChangeChargeAttempt(em: EntityManager, changeSessionId: string): Promise<number> {
  const rows = await em.execute<{ attempt: number | null }[]>("select max(attempt) as attempt from subscription_charges where change_session_id = ?", [
    changeSessionId,
  ]);
  return Number(rows[0]?.attempt ?? 0);
}

const CHARGE_SUCCEEDED = sqlStatus(chargeMachine.statuses, "SUCCEEDED");

/** The index of the subscription's last period paid by its own charge (0 before any); a change's charges do not count. */
export async function lastPaidPeriodIndex(em: EntityManager, subscriptionId: string): Promise<number> {
  const rows = await em.execute<{ period: number | null }[]>(
    `select max(period_index) as period from subscription_charges where subscription_id = ? and change_session_id is null and status = ${CHARGE_SUCCEEDED}`,
    [subscriptionId],
  );
  return Number(rows[0]?.period ?? 0);
}

/** Which of `subscriptionIds` has a plan change scheduled (a change session the billing date applies). */
export async function subscriptionsWithScheduledChange(em: EntityManager, subscriptionIds: readonly string[]): Promise<Set<string>> {
  const rows = await em.execute<{ subscription_id: string }[]>(
    `select subscription_id from subscription_change_sessions where ${statusIn("status", changeSessionMachine.statesFrom("apply"))} and subscription_id in (${subscriptionIds.map(() => "?").join(", ")})`,
    [...subscriptionIds],
  );
  return new Set(rows.map((r) => r.subscription_id));
}

/** The plan-change sweep's lag probe: when the oldest scheduled change due at `now` became due (its date, or its billing date if later). */
export function oldestDuePlanChange(em: EntityManager, now: Date): Promise<Date | null> {
  return oldestOf(
    em,
    `select min(greatest(cs.scheduled_for, s.next_billing_at)) as oldest
       from subscription_change_sessions cs join subscriptions s on s.id = cs.subscription_id
      where ${PLAN_CHANGE_DUE()}`,
    [now, now],
  );
}

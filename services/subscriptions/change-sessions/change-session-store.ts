import { LockMode } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { DomainError, notFound } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { Subscription, SubscriptionCharge, type ChargeRow, type SubscriptionRow } from "../entities.ts";
import { SubscriptionChangeSession, type ChangeSessionRow } from "./change-session-entities.ts";
import { changeSessionToken, hashAuthorizationToken, looksLikeAuthorizationToken } from "../authorization-token.ts";
import { noteAuditObject } from "../../platform/audit/call-context.ts";

/** Queries shared by the change-session use cases; each use case owns its transaction. */

/** Statuses a subscription may change plan from. */
export const CHANGEABLE_STATUSES: readonly string[] = ["ACTIVE", "TRIALING", "PAUSED"];

export const changeSessionNotFound = (id: string) => notFound("CHANGE_SESSION_NOT_FOUND", `change session ${id} not found`);

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
export function openApprovalUrl(publicBaseUrl: string, linkKey: Buffer, session: ChangeSessionRow): string | undefined {
  if (session.status !== "PENDING_APPROVAL") return undefined;
  const { token, hash } = changeSessionToken(linkKey, session.id);
  return hash === session.tokenHash ? changeApprovalUrl(publicBaseUrl, token) : undefined;
}

import type { EntityManager } from "@mikro-orm/postgresql";
import { DomainError, notFound } from "../platform/errors.ts";
import { Subscription, SubscriptionAuthorization, type AuthorizationRow, type SubscriptionRow } from "./entities.ts";
import { hashAuthorizationToken, looksLikeAuthorizationToken } from "./authorization-token.ts";
import { noteAuditObject } from "../platform/audit/call-context.ts";

/** The authorization a token names and its subscription; AUTHORIZATION_NOT_FOUND otherwise. */
export async function findByToken(em: EntityManager, token: string): Promise<{ authorization: AuthorizationRow; subscription: SubscriptionRow }> {
  const authorization = looksLikeAuthorizationToken(token)
    ? await em.findOne(SubscriptionAuthorization, { tokenHash: hashAuthorizationToken(token) }, { refresh: true })
    : null;
  if (!authorization) throw notFound("AUTHORIZATION_NOT_FOUND", "this authorization link is not valid");
  const subscription = await em.findOneOrFail(Subscription, { id: authorization.subscriptionId }, { refresh: true });
  // The customer acts by token: the audit entry learns the subscription and merchant here.
  noteAuditObject("Subscription", subscription);
  return { authorization, subscription };
}

/** PENDING turns EXPIRED the moment expiresAt passes on the service clock, even before the expiry job ran. */
export function effectiveStatus(authorization: AuthorizationRow, now: Date): AuthorizationRow["status"] {
  return authorization.status === "PENDING" && authorization.expiresAt.getTime() <= now.getTime() ? "EXPIRED" : authorization.status;
}

/** Throws unless the customer may still answer this authorization (approve or decline). */
export function assertAnswerable(authorization: AuthorizationRow, subscription: SubscriptionRow, now: Date): void {
  const status = effectiveStatus(authorization, now);
  if (status === "EXPIRED") throw new DomainError("failed_precondition", "AUTHORIZATION_EXPIRED", "this authorization link has expired");
  if (status === "CANCELLED") throw new DomainError("failed_precondition", "AUTHORIZATION_CANCELLED", "the merchant cancelled this subscription");
  if (status !== "PENDING" || authorization.usedAt || subscription.status !== "PENDING_APPROVAL") {
    throw new DomainError("failed_precondition", "AUTHORIZATION_USED", "this authorization link has already been used");
  }
}

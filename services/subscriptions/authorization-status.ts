import { defineStatusMachine } from "../platform/status-machine.ts";
import { AUTHORIZATION_STATUSES, type AuthorizationStatus } from "./contract.ts";
import type { AuthorizationRow } from "./entities.ts";

/**
 * The authorization status machine: a hosted-page link is answered once.
 * PENDING is the only open status; every move out of it is final and stamps
 * its time (`markAuthorization`), in the transaction that moves the
 * subscription (status-machine.ts).
 */
type AuthorizationEvent =
  | "approve" // the customer approved with their PIN (the first payment, if any, was taken)
  | "decline" // the customer pressed Cancel on the hosted page
  | "expire" //  the link ran out unanswered
  | "cancel"; // the merchant cancelled the subscription while the link was open

export const authorizationMachine = defineStatusMachine<AuthorizationStatus, AuthorizationEvent>("authorization", AUTHORIZATION_STATUSES, [
  { from: "PENDING", event: "approve", to: "APPROVED" },
  { from: "PENDING", event: "decline", to: "DECLINED" },
  { from: "PENDING", event: "expire", to: "EXPIRED" },
  { from: "PENDING", event: "cancel", to: "CANCELLED" },
]);

/** The move, with the times it records: an answer (approve, decline) uses the link up. */
export function markAuthorization(authorization: AuthorizationRow, event: AuthorizationEvent, at: Date): void {
  authorization.status = authorizationMachine.next(authorization.status, event);
  if (event === "approve") authorization.approvedAt = at;
  if (event === "decline") authorization.declinedAt = at;
  if (event === "expire") authorization.expiredAt = at;
  if (event === "approve" || event === "decline") authorization.usedAt = at;
}

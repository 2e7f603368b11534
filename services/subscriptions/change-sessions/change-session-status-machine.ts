import { DomainError } from "../../platform/errors.ts";
import { CHANGE_SESSION_STATUSES, type ChangeSessionStatus } from "../contract.ts";

/**
 * The change-session status machine: the one table of legal moves (the
 * docs/merchant-api.md's "Plan changes" table mirrors it). Every use case asks
 * `nextChangeStatus` while holding the subscription row lock (and the
 * session's), so concurrent approvals, declines, expiries and cancellations
 * can never make a move this table does not list.
 */
export { CHANGE_SESSION_STATUSES, type ChangeSessionStatus };

export type ChangeSessionEvent =
  | "approve_immediate" //    customer approved an IMMEDIATE change (immediate charge taken, if any)
  | "approve_next_billing" // customer approved a NEXT_BILLING change
  | "decline" //              customer pressed Cancel on the hosted page
  | "expire" //               the approval link ran out unanswered
  | "apply" //                the scheduled change's billing date came
  | "supersede" //            another change of the subscription was approved
  | "cancel"; //              the subscription was cancelled, or the merchant withdrew the session

export const CHANGE_TRANSITIONS: readonly { from: ChangeSessionStatus; event: ChangeSessionEvent; to: ChangeSessionStatus }[] = [
  { from: "PENDING_APPROVAL", event: "approve_immediate", to: "APPLIED" },
  { from: "PENDING_APPROVAL", event: "approve_next_billing", to: "SCHEDULED" },
  { from: "PENDING_APPROVAL", event: "decline", to: "DECLINED" },
  { from: "PENDING_APPROVAL", event: "expire", to: "EXPIRED" },
  { from: "PENDING_APPROVAL", event: "cancel", to: "CANCELLED" },
  { from: "SCHEDULED", event: "apply", to: "APPLIED" },
  { from: "SCHEDULED", event: "supersede", to: "CANCELLED" },
  { from: "SCHEDULED", event: "cancel", to: "CANCELLED" },
];

/** An open session awaits the customer; at most one per subscription (a unique index says so too). */
export const isOpen = (status: string): boolean => status === "PENDING_APPROVAL";

export class InvalidChangeSessionTransitionError extends DomainError {
  constructor(from: string, event: ChangeSessionEvent) {
    super("failed_precondition", "INVALID_CHANGE_SESSION_TRANSITION", `cannot ${event.replace(/_/g, " ")} a change session in status ${from}`);
  }
}

export function nextChangeStatus(current: string, event: ChangeSessionEvent): ChangeSessionStatus {
  const row = CHANGE_TRANSITIONS.find((t) => t.from === current && t.event === event);
  if (!row) throw new InvalidChangeSessionTransitionError(current, event);
  return row.to;
}

export const canChangeTransition = (current: string, event: ChangeSessionEvent): boolean =>
  CHANGE_TRANSITIONS.some((t) => t.from === current && t.event === event);

import { defineStatusMachine } from "../../platform/status-machine.ts";
import { CHANGE_SESSION_STATUSES, type ChangeSessionStatus } from "../contract.ts";

/**
 * The change-session status machine: the one table of legal moves (the
 * docs/merchant-api.md's "Plan changes" table mirrors it). Every use case asks
 * `changeSessionMachine.next` while holding the subscription row lock (and the
 * session's), so concurrent approvals, declines, expiries and cancellations
 * can never make a move this table does not list. An illegal move is 409
 * INVALID_STATUS_TRANSITION, as on every machine (before 2026-11 it was
 * INVALID_CHANGE_SESSION_TRANSITION: CHANGELOG.md).
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

export const changeSessionMachine = defineStatusMachine<ChangeSessionStatus, ChangeSessionEvent>("change session", CHANGE_SESSION_STATUSES, [
  { from: "PENDING_APPROVAL", event: "approve_immediate", to: "APPLIED" },
  { from: "PENDING_APPROVAL", event: "approve_next_billing", to: "SCHEDULED" },
  { from: "PENDING_APPROVAL", event: "decline", to: "DECLINED" },
  { from: "PENDING_APPROVAL", event: "expire", to: "EXPIRED" },
  { from: "PENDING_APPROVAL", event: "cancel", to: "CANCELLED" },
  { from: "SCHEDULED", event: "apply", to: "APPLIED" },
  { from: "SCHEDULED", event: "supersede", to: "CANCELLED" },
  { from: "SCHEDULED", event: "cancel", to: "CANCELLED" },
]);

import { DomainError } from "../platform/errors.ts";
import type { PlanStatus } from "./contract.ts";

export type PlanEvent = "archive" | "unarchive";

/**
 * The plan lifecycle, one table. Repeating a move is allowed and changes
 * nothing (archiving an archived plan is a 200, no second event).
 */
export const PLAN_TRANSITIONS: readonly { from: PlanStatus; event: PlanEvent; to: PlanStatus }[] = [
  { from: "ACTIVE", event: "archive", to: "ARCHIVED" },
  { from: "ARCHIVED", event: "archive", to: "ARCHIVED" },
  { from: "ARCHIVED", event: "unarchive", to: "ACTIVE" },
  { from: "ACTIVE", event: "unarchive", to: "ACTIVE" },
];

export function nextPlanStatus(current: string, event: PlanEvent): PlanStatus {
  const row = PLAN_TRANSITIONS.find((t) => t.from === current && t.event === event);
  if (!row) throw new DomainError("failed_precondition", "INVALID_STATUS_TRANSITION", `cannot ${event} a plan in status ${current}`);
  return row.to;
}

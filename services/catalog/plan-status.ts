import { defineStatusMachine } from "../platform/status-machine.ts";
import { PLAN_STATUSES, type PlanStatus } from "./contract.ts";

export type PlanEvent = "archive" | "unarchive";

/**
 * The plan lifecycle, one table. Repeating a move is allowed and changes
 * nothing (archiving an archived plan is a 200, no second event).
 */
export const planMachine = defineStatusMachine<PlanStatus, PlanEvent>("plan", PLAN_STATUSES, [
  { from: "ACTIVE", event: "archive", to: "ARCHIVED" },
  { from: "ARCHIVED", event: "archive", to: "ARCHIVED" },
  { from: "ARCHIVED", event: "unarchive", to: "ACTIVE" },
  { from: "ACTIVE", event: "unarchive", to: "ACTIVE" },
]);

import type { DueWorkProbe } from "../platform/observability/due-work.ts";
import { oldestExpiredAuthorization } from "./subscription-store.ts";
import { oldestDueRenewal } from "./renewals/renewal-store.ts";
import { oldestDuePlanChange } from "./change-sessions/change-session-store.ts";

/** Lag probes of the subscription sweeps (same "due" conditions as the sweeps' queries: due-predicates.ts). */
export const subscriptionDueWork: DueWorkProbe[] = [
  { kind: "renewal", group: "renewals", oldestDue: oldestDueRenewal },
  { kind: "authorization_expiry", group: "scheduler", oldestDue: oldestExpiredAuthorization },
  { kind: "plan_change", group: "scheduler", oldestDue: oldestDuePlanChange },
];

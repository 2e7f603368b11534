import { handleJob, handleSweep } from "../../platform/queue/define-job.ts";
import { contextFor } from "../../platform/service-deps.ts";
import { applyDuePlanChanges, applyScheduledChange } from "./apply-scheduled-change.ts";
import { cancelChangeSessionsOfEndedSubscriptions } from "./cancel-change-sessions.ts";
import { expireChangeSession, expireDueChangeSessions } from "./expire-change-session.ts";
import { applyPlanChangeKind, changeSessionsSweep, expireChangeSessionKind } from "./change-session-queue.ts";

/** Handlers of change sessions' jobs (kinds and enqueueing: change-session-queue.ts). */
export const changeSessionJobs = [
  handleJob(expireChangeSessionKind, async (deps, payload) => {
    await deps.clock.sync();
    await expireChangeSession(contextFor(deps), payload.changeSessionId);
  }),
  handleJob(applyPlanChangeKind, async (deps, payload) => {
    await deps.clock.sync();
    await applyScheduledChange(contextFor(deps), payload.changeSessionId);
  }),
  handleSweep(changeSessionsSweep, async (deps) => {
    await deps.clock.sync();
    await expireDueChangeSessions(contextFor(deps));
    await applyDuePlanChanges(contextFor(deps));
    await cancelChangeSessionsOfEndedSubscriptions(contextFor(deps));
  }),
];

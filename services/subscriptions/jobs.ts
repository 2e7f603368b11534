import { handleJob, handleSweep } from "../platform/queue/define-job.ts";
import { contextFor } from "../platform/service-deps.ts";
import { expireAuthorization, expireDueAuthorizations } from "./expire-authorization.ts";
import { settleStaleCharges } from "./charges/settle-charge.ts";
import { processSubscriptionPorts } from "./ports.ts";
import { expireAuthorizationKind, subscriptionsSweep } from "./subscription-queue.ts";
import { settleStaleRefunds } from "./refunds/settle-refund.ts";

/** Handlers of the subscriptions' `scheduler` jobs (kinds and enqueueing: subscription-queue.ts). */
export const subscriptionJobs = [
  handleJob(expireAuthorizationKind, async (deps, payload) => {
    await deps.clock.sync();
    await expireAuthorization(contextFor(deps), payload.subscriptionId);
  }),
  handleSweep(subscriptionsSweep, async (deps) => {
    await deps.clock.sync();
    await settleStaleCharges(contextFor(deps), processSubscriptionPorts(deps));
    await settleStaleRefunds(contextFor(deps), processSubscriptionPorts(deps));
    await expireDueAuthorizations(contextFor(deps));
  }),
];

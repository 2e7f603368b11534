import { handleSweep } from "../platform/queue/define-job.ts";
import { processSubscriptionPorts } from "../subscriptions/ports.ts";
import { collectEmails } from "./collect-emails.ts";
import { sendDueEmails } from "./send-due-emails.ts";
import { collectEmailsSweep, sendDueEmailsSweep } from "./email-queue.ts";

/** Handlers of the `emails` group (kinds: email-queue.ts). */
export const emailJobs = [
  handleSweep(collectEmailsSweep, async (deps) => {
    await deps.clock.sync();
    await collectEmails(deps, processSubscriptionPorts(deps));
  }),
  handleSweep(sendDueEmailsSweep, async (deps) => {
    await deps.clock.sync();
    await sendDueEmails(deps);
  }),
];

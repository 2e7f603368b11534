import { sweepKind } from "../platform/queue/job-kind.ts";

/**
 * The `emails` worker group: two sweeps over Postgres, no queued job carries
 * an email (the outbox table is the record; the sweeps only make it prompt).
 * Handlers: jobs.ts.
 */
export const collectEmailsSweep = sweepKind({ name: "emails.collect", group: "emails", every: (c) => Math.min(c.sweepIntervalMs, 1_000) });
export const sendDueEmailsSweep = sweepKind({ name: "emails.send-due", group: "emails", every: (c) => Math.min(c.sweepIntervalMs, 1_000) });

export const emailJobKinds = [collectEmailsSweep, sendDueEmailsSweep];

import type { createTransport } from "nodemailer";
import type { EMAIL_KINDS, EMAIL_OUTCOMES } from "../platform/observability/metrics.ts";
import type { ServiceDeps } from "../platform/service-deps.ts";
import { EMAIL_MAX_ATTEMPTS, EMAIL_RETRY_DELAYS_MS, EMAIL_SEND_LEASE_MS } from "./contract.ts";
import { claimDueEmails, markEmailParked, markEmailRetry, markEmailSent, type ClaimedEmail } from "./email-store.ts";

/**
 * SMTP timeouts: nodemailer's defaults (2 min connect, 30 s greeting, 10 min
 * idle socket) would let one stuck send outlive the claim's lease, and the next
 * sender would mail the same email again.
 */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 } as const;
/** The longest one send may take before it fails (each send opens its own connection). */
const SEND_BUDGET_MS = SMTP_TIMEOUTS.connectionTimeout + SMTP_TIMEOUTS.greetingTimeout + SMTP_TIMEOUTS.socketTimeout;
/** Claim only as many as can be sent, one by one, within one lease (at least one). */
const BATCH_SIZE = Math.max(1, Math.floor(EMAIL_SEND_LEASE_MS / SEND_BUDGET_MS));

/** SMTP commands whose 5xx refuses this message for good (a 5xx to AUTH or the greeting is our configuration: retried, not parked). */
const MESSAGE_COMMANDS = new Set(["MAIL FROM", "RCPT TO", "DATA"]);

function isPermanentRefusal(err: unknown): boolean {
  const e = err as { responseCode?: number; command?: string };
  return typeof e?.responseCode === "number" && e.responseCode >= 500 && e.responseCode < 600 && MESSAGE_COMMANDS.has(String(e.command ?? "").toUpperCase());
}

/**
 * Sends the due emails of the outbox. Each is claimed first in its own commit
 * (SENDING, its attempt counted, due again only after a lease), then handed to
 * SMTP, then marked: SENT; a permanent refusal (5xx to MAIL FROM, RCPT TO or
 * DATA) PARKED; any other failure due again after a back-off, PARKED after the
 * last attempt. Every mark is fenced on (SENDING, attempt): a sender whose
 * lease ran out cannot overwrite the next one's result. A sender killed before
 * the server accepted leaves the claim to run out and the email is sent once
 * by the next; the one window left (killed after the server's 250, before the
 * mark) is narrowed by the Message-ID, fixed per email, for the receiving
 * side to de-duplicate (docs/operations.md, "Emails to customers").
 */
export async function sendDueEmails(deps: Pick<ServiceDeps, "orm" | "clock" | "config" | "logger" | "metrics">): Promise<number> {
  const { config } = deps;
  if (!config.smtpUrl || !config.emailFrom) return 0;
  // Loaded on the first send, not at start: a deployment without SMTP (the default) never pays its ~8 MiB.
  const { createTransport } = await import("nodemailer");
  const transport = createTransport({ url: config.smtpUrl, ...SMTP_TIMEOUTS }, { from: config.emailFrom });
  let sent = 0;
  try {
    for (;;) {
      const claimed = await claim(deps);
      for (const email of claimed) {
        const outcome = await sendOne(deps, transport, email);
        if (outcome === "sent") sent += 1;
      }
      if (claimed.length < BATCH_SIZE) return sent;
    }
  } finally {
    transport.close();
  }
}

async function claim(deps: Pick<ServiceDeps, "orm" | "clock">): Promise<ClaimedEmail[]> {
  const now = deps.clock.now();
  return claimDueEmails(deps.orm.em.fork(), now, new Date(now.getTime() + EMAIL_SEND_LEASE_MS), BATCH_SIZE);
}

type Transport = ReturnType<typeof createTransport>;
/** The labels of billing_emails_total: only the kinds and outcomes metrics.ts lists (what dashboards rely on). */
type EmailsLabels = { kind: (typeof EMAIL_KINDS)[number]; outcome: (typeof EMAIL_OUTCOMES)[number] };
type SendOutcome = Exclude<EmailsLabels["outcome"], "skipped">;

async function sendOne(deps: Pick<ServiceDeps, "orm" | "clock" | "logger" | "metrics">, transport: Transport, email: ClaimedEmail): Promise<SendOutcome> {
  let outcome: SendOutcome;
  let error: string | null = null;
  try {
    await transport.sendMail({
      to: email.recipient,
      subject: email.subject,
      text: email.text_body,
      html: email.html_body,
      messageId: `<${email.id}@customer-emails.billing>`,
    });
    outcome = "sent";
  } catch (err) {
    error = String((err as Error)?.message ?? err).slice(0, 1000);
    outcome = isPermanentRefusal(err) || email.attempt_count >= EMAIL_MAX_ATTEMPTS ? "parked" : "failed";
    deps.logger.warn({ emailId: email.id, kind: email.kind, attempt: email.attempt_count, outcome, err: error }, "customer email not sent");
  }
  const now = deps.clock.now();
  const fence = { id: email.id, attemptCount: email.attempt_count };
  const em = deps.orm.em.fork();
  if (outcome === "sent") {
    await markEmailSent(em, fence, now);
  } else if (outcome === "parked") {
    await markEmailParked(em, fence, error, now);
  } else {
    const delay = EMAIL_RETRY_DELAYS_MS[Math.min(email.attempt_count, EMAIL_RETRY_DELAYS_MS.length) - 1]!;
    await markEmailRetry(em, fence, new Date(now.getTime() + delay), error, now);
  }
  deps.metrics?.emails.inc({ kind: email.kind, outcome } satisfies EmailsLabels);
  return outcome;
}

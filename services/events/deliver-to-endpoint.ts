import type { ServiceDeps } from "../platform/service-deps.ts";
import { contextFor } from "../platform/service-deps.ts";
import { claimNextDelivery, newLeaseHolder, releaseEndpoint } from "./claim-delivery.ts";
import { recordAttempt } from "./record-attempt.ts";
import { createSenderAgents, sendWebhook, type SenderAgents, type WebhookResponse } from "./send-webhook.ts";
import type { WebhookAttemptOutcome } from "../platform/observability/metrics.ts";
import { signatureHeader } from "./webhook-secret.ts";
import { enqueueDelivery, enqueueEndpointDrain } from "./webhook-queue.ts";

/** A worker's turn on one endpoint; then it yields the slot so other endpoints are served too. */
const MAX_DELIVERIES_PER_TURN = 50;

export type DeliverDeps = Pick<ServiceDeps, "orm" | "clock" | "config" | "logger" | "queues" | "metrics">;

/**
 * Sends an endpoint's due deliveries one at a time, oldest event first, until
 * none is due or the turn is used up. A failed attempt is rescheduled and the
 * next event goes on: a failing event does not hold the later ones back.
 * A slow receiver occupies one worker slot at most (one request in flight per endpoint).
 */
export async function deliverToEndpoint(deps: DeliverDeps, endpointId: string): Promise<number> {
  const { config } = deps;
  const holder = newLeaseHolder();
  // Long enough for one request and its bookkeeping; if we die, the sweep takes over after this.
  const leaseMs = 2 * config.webhookTimeoutMs + 1000;
  const guardDestination = !config.sandbox && !config.webhookAllowPrivate;
  const agents = createSenderAgents();
  try {
    return await takeTurn(deps, endpointId, { holder, leaseMs, guardDestination, agents });
  } finally {
    agents.destroy();
  }
}

async function takeTurn(
  deps: DeliverDeps,
  endpointId: string,
  turn: { holder: string; leaseMs: number; guardDestination: boolean; agents: SenderAgents },
): Promise<number> {
  const { config } = deps;
  const { holder, leaseMs, guardDestination, agents } = turn;
  let sent = 0;
  while (sent < MAX_DELIVERIES_PER_TURN) {
    const claim = await claimNextDelivery(contextFor(deps), { endpointId, holder, leaseMs, secretsKey: config.secretsKey });
    if (claim.kind !== "claimed") return sent;
    const d = claim.delivery;
    // Unix seconds of this attempt from the real wall clock, even in sandbox mode:
    // receivers check it against their own clock (Standard Webhooks tolerance).
    const timestamp = Math.floor(Date.now() / 1000);
    const response = await sendWebhook({
      url: d.url,
      body: d.body,
      timeoutMs: config.webhookTimeoutMs,
      guardDestination,
      agents,
      headers: {
        "user-agent": "billing-webhooks/1",
        "webhook-id": d.eventId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signatureHeader(d.secrets, d.eventId, timestamp, d.body),
      },
    });
    deps.metrics?.webhookAttempts.inc({ outcome: attemptOutcome(response) });
    const verdict = await recordAttempt(contextFor(deps), d, response, config.webhookRetryScheduleMs);
    sent++;
    if (verdict.kind === "retry") {
      await enqueueDelivery(deps.queues, { endpointId, deliveryId: d.deliveryId, attemptNumber: d.attemptNumber + 1 }, verdict.delayMs);
    }
    if (verdict.kind !== "succeeded" && verdict.kind !== "superseded") {
      deps.logger.info({ endpointId, deliveryId: d.deliveryId, attempt: d.attemptNumber, verdict: verdict.kind, status: response.statusCode, error: response.error }, "webhook attempt failed");
    }
    if (verdict.kind === "gone") {
      deps.metrics?.webhookEndpointsDisabled.inc();
      return sent;
    }
  }
  await releaseEndpoint(contextFor(deps), endpointId, holder);
  await enqueueEndpointDrain(deps.queues, endpointId, `turn-${holder}`);
  return sent;
}

/** billing_webhook_attempts_total's outcome: a 2xx; the timeout; no receiver reached (refused connection or destination); else failed. */
export function attemptOutcome(response: WebhookResponse): WebhookAttemptOutcome {
  if (response.statusCode !== undefined && response.statusCode >= 200 && response.statusCode < 300) return "succeeded";
  if (response.failure === "timeout") return "timeout";
  if (response.failure === "refused") return "refused";
  return "failed";
}

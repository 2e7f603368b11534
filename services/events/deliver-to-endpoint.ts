import type { ServiceDeps } from "../platform/service-deps.ts";
import { contextFor } from "../platform/service-deps.ts";
import { claimDeliveries, newLeaseHolder, releaseEndpoint, unclaimDeliveries, type ClaimedDelivery, type ClaimedEndpoint } from "./claim-delivery.ts";
import { recordAttempt, recordAttempts, type AttemptVerdict } from "./record-attempt.ts";
import { createSenderAgents, sendWebhook, type SenderAgents, type WebhookResponse } from "./send-webhook.ts";
import { signatureHeader } from "./webhook-secret.ts";
import { enqueueDelivery, enqueueEndpointDrain } from "./webhook-queue.ts";

/** A worker's turn on one endpoint; then it yields the slot so other endpoints are served too. */
const MAX_DELIVERIES_PER_TURN = 200;
/**
 * Deliveries claimed (and recorded) per round trip: as many as go out at once
 * (max_in_flight; one for an ordered endpoint). Never more: every claimed
 * delivery is sent at once, so an attempt on record (IN_PROGRESS, or
 * INTERRUPTED after a crash) is always a request that really went out.
 */
const batchSize = (e: { ordered: boolean; maxInFlight: number }) => (e.ordered ? 1 : e.maxInFlight);

export type DeliverDeps = Pick<ServiceDeps, "orm" | "clock" | "config" | "logger" | "queues">;

/**
 * Sends an endpoint's due deliveries, oldest event first, until none is due
 * or the turn is used up. Per round trip it claims a batch (one transaction),
 * sends it with at most the endpoint's max_in_flight requests at once (one at
 * a time, in event order, when the endpoint is ordered), then records every
 * answer in one statement. A failed attempt is rescheduled and the next event
 * goes on: a failing event does not hold the later ones back. A slow receiver
 * occupies one worker slot at most.
 */
export async function deliverToEndpoint(deps: DeliverDeps, endpointId: string): Promise<number> {
  const { config } = deps;
  const holder = newLeaseHolder();
  // Long enough for one request and its bookkeeping, per round of the batch; if we die, the sweep takes over after this.
  const leaseMs = 2 * config.webhookTimeoutMs + 1000;
  const guardDestination = !config.sandbox && !config.webhookAllowPrivate;
  let agents: SenderAgents | undefined;
  try {
    let sent = 0;
    while (sent < MAX_DELIVERIES_PER_TURN) {
      const claim = await claimDeliveries(contextFor(deps), {
        endpointId,
        holder,
        leaseMs,
        secretsKey: config.secretsKey,
        limit: (e) => Math.min(batchSize(e), MAX_DELIVERIES_PER_TURN - sent),
      });
      if (claim.kind !== "claimed") return sent;
      agents ??= createSenderAgents(claim.endpoint.maxInFlight);
      const outcome = await sendBatch(deps, claim.endpoint, claim.deliveries, { guardDestination, agents });
      sent += outcome.sent;
      if (outcome.gone) return sent;
    }
    await releaseEndpoint(contextFor(deps), endpointId, holder);
    await enqueueEndpointDrain(deps.queues, endpointId, `turn-${holder}`);
    return sent;
  } finally {
    agents?.destroy();
  }
}

async function sendBatch(
  deps: DeliverDeps,
  endpoint: ClaimedEndpoint,
  deliveries: ClaimedDelivery[],
  turn: { guardDestination: boolean; agents: SenderAgents },
): Promise<{ sent: number; gone: boolean }> {
  const { config } = deps;
  const answered: { claimed: ClaimedDelivery; response: WebhookResponse }[] = [];
  let goneAnswer: { claimed: ClaimedDelivery; response: WebhookResponse } | undefined;
  let next = 0;
  const lane = async () => {
    // Stop starting requests once the endpoint said 410 Gone.
    while (next < deliveries.length && !goneAnswer) {
      const d = deliveries[next++]!;
      // Unix seconds of this attempt from the real wall clock, even in sandbox mode:
      // receivers check it against their own clock (Standard Webhooks tolerance).
      const timestamp = Math.floor(Date.now() / 1000);
      const response = await sendWebhook({
        url: d.url,
        body: d.body,
        timeoutMs: config.webhookTimeoutMs,
        guardDestination: turn.guardDestination,
        agents: turn.agents,
        headers: {
          "user-agent": "billing-webhooks/1",
          "webhook-id": d.eventId,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signatureHeader(d.secrets, d.eventId, timestamp, d.body),
        },
      });
      if (response.statusCode === 410 && !goneAnswer) goneAnswer = { claimed: d, response };
      else answered.push({ claimed: d, response });
    }
  };
  await Promise.all(Array.from({ length: Math.min(endpoint.maxInFlight, deliveries.length) }, lane));

  const verdicts = await recordAttempts(contextFor(deps), answered, config.webhookRetryScheduleMs);
  const results: { claimed: ClaimedDelivery; verdict: AttemptVerdict; response: WebhookResponse }[] = answered.map((a, i) => ({ ...a, verdict: verdicts[i]! }));
  if (goneAnswer) {
    results.push({ ...goneAnswer, verdict: await recordAttempt(contextFor(deps), goneAnswer.claimed, goneAnswer.response, config.webhookRetryScheduleMs) });
    await unclaimDeliveries(contextFor(deps), deliveries.slice(next));
  }
  for (const { claimed: d, verdict, response } of results) {
    if (verdict.kind === "retry") {
      await enqueueDelivery(deps.queues, { endpointId: d.endpointId, deliveryId: d.deliveryId, attemptNumber: d.attemptNumber + 1 }, verdict.delayMs);
    }
    if (verdict.kind !== "succeeded" && verdict.kind !== "superseded") {
      deps.logger.info({ endpointId: d.endpointId, deliveryId: d.deliveryId, attempt: d.attemptNumber, verdict: verdict.kind, status: response.statusCode, error: response.error }, "webhook attempt failed");
    }
  }
  return { sent: results.length, gone: goneAnswer !== undefined };
}

import type { ServiceDeps } from "../platform/service-deps.ts";
import { contextFor } from "../platform/service-deps.ts";
import { claimDeliveries, newLeaseHolder, releaseEndpoint, type ClaimedDelivery } from "./claim-delivery.ts";
import { recordAttempt, recordAttempts, type AttemptVerdict } from "./record-attempt.ts";
import { createSenderAgents, sendWebhook, type SenderAgents, type WebhookResponse } from "./send-webhook.ts";
import { signatureHeader } from "./webhook-secret.ts";
import type { WebhookAttemptOutcome } from "../platform/observability/metrics.ts";
import { enqueueDelivery, enqueueEndpointDrain } from "./webhook-queue.ts";

/**
 * A worker's turn on one endpoint (at least 200 deliveries, 20 rounds of its
 * max_in_flight); then it yields the slot so other endpoints are served too.
 */
const turnLength = (maxInFlight: number) => Math.max(200, 20 * maxInFlight);

export type DeliverDeps = Pick<ServiceDeps, "orm" | "clock" | "config" | "logger" | "queues" | "metrics">;

interface Answer {
  claimed: ClaimedDelivery;
  response: WebhookResponse;
}

/**
 * Sends an endpoint's due deliveries, oldest event first, until none is due
 * or the turn is used up, keeping up to the endpoint's max_in_flight requests
 * going (one, in event order, when the endpoint is ordered). Each claim takes
 * exactly as many deliveries as there are free slots, in one transaction, and
 * every claimed delivery is sent at once: an attempt on record (IN_PROGRESS,
 * or INTERRUPTED after a crash) is always a request that really went out.
 * Answers are recorded in batches (one statement), while the next requests
 * are already on their way. A failed attempt is rescheduled and the next
 * event goes on: a failing event does not hold the later ones back. A slow
 * receiver occupies one worker slot at most.
 */
export async function deliverToEndpoint(deps: DeliverDeps, endpointId: string): Promise<number> {
  const { config } = deps;
  const holder = newLeaseHolder();
  // Renewed by every claim: long enough for the requests claimed then and their bookkeeping. If we die, the sweep takes over after this.
  const leaseMs = 2 * config.webhookTimeoutMs + 1000;
  const guardDestination = !config.sandbox && !config.webhookAllowPrivate;
  let agents: SenderAgents | undefined;
  const inFlight = new Map<string, Promise<void>>();
  let answers: Answer[] = [];
  /** 410 answers: the first disables the endpoint; each is recorded on its own once nothing is in flight. */
  const goneAnswers: Answer[] = [];
  let gone = false;
  let maxInFlight = 1;
  let claimedTotal = 0;
  let sent = 0;
  /** The last claim found nothing more due: finish what is in flight before looking again. */
  let nothingDue = false;

  const send = async (d: ClaimedDelivery) => {
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
    if (response.statusCode === 410) {
      goneAnswers.push({ claimed: d, response });
      gone = true;
    } else {
      answers.push({ claimed: d, response });
    }
  };

  /** Records the answers so far (one statement; a 410 on its own, it disables the endpoint), then queues retries. */
  const flush = async () => {
    const batch = answers;
    answers = [];
    const verdicts = await recordAttempts(contextFor(deps), batch, config.webhookRetryScheduleMs);
    const results: (Answer & { verdict: AttemptVerdict })[] = batch.map((a, i) => ({ ...a, verdict: verdicts[i]! }));
    if (inFlight.size === 0) {
      for (const g of goneAnswers.splice(0)) {
        results.push({ ...g, verdict: await recordAttempt(contextFor(deps), g.claimed, g.response, config.webhookRetryScheduleMs) });
      }
    }
    sent += results.length;
    for (const { claimed: d, verdict, response } of results) {
      if (verdict.kind === "retry") {
        await enqueueDelivery(deps.queues, { endpointId: d.endpointId, deliveryId: d.deliveryId, attemptNumber: d.attemptNumber + 1 }, verdict.delayMs);
      }
      if (verdict.kind === "gone") deps.metrics?.webhookEndpointsDisabled.inc();
      if (verdict.kind !== "succeeded" && verdict.kind !== "superseded") {
        deps.logger.info({ endpointId: d.endpointId, deliveryId: d.deliveryId, attempt: d.attemptNumber, verdict: verdict.kind, status: response.statusCode, error: response.error }, "webhook attempt failed");
      }
    }
  };

  try {
    for (;;) {
      // A slot is free once its answer is recorded (so a crash repeats at most max_in_flight requests).
      // Refill when half the slots (or all) are free: claims in batches, not one per answer.
      const held = inFlight.size + answers.length;
      const refill = held === 0 || maxInFlight - held >= Math.ceil(maxInFlight / 2);
      if (!gone && !nothingDue && refill && claimedTotal < turnLength(maxInFlight)) {
        const holding = [...inFlight.keys(), ...answers.map((a) => a.claimed.deliveryId)];
        const claim = await claimDeliveries(contextFor(deps), {
          endpointId,
          holder,
          leaseMs,
          secretsKey: config.secretsKey,
          holding,
          limit: (e) => Math.min((e.ordered ? 1 : e.maxInFlight) - held, turnLength(e.maxInFlight) - claimedTotal),
        });
        if (claim.kind === "claimed") {
          maxInFlight = claim.endpoint.maxInFlight;
          agents ??= createSenderAgents(maxInFlight);
          claimedTotal += claim.deliveries.length;
          for (const d of claim.deliveries) inFlight.set(d.deliveryId, send(d).finally(() => inFlight.delete(d.deliveryId)));
        } else if (holding.length === 0) {
          // Nothing due (the claim released our lease), disabled, or another worker holds the endpoint.
          return sent;
        } else {
          nothingDue = true;
        }
      }
      if (inFlight.size === 0) {
        await flush();
        if (gone || claimedTotal >= turnLength(maxInFlight)) break;
        // Look again: with nothing held any more, an empty claim releases the lease and ends the turn.
        nothingDue = false;
        continue;
      }
      // Wait for one answer; record what came back unless more slots are about to be refilled.
      await Promise.race(inFlight.values());
      if (answers.length >= Math.ceil(maxInFlight / 2) || nothingDue || gone || claimedTotal >= turnLength(maxInFlight)) await flush();
    }
    if (gone) return sent;
    await releaseEndpoint(contextFor(deps), endpointId, holder);
    await enqueueEndpointDrain(deps.queues, endpointId, `turn-${holder}`);
    return sent;
  } finally {
    await Promise.allSettled(inFlight.values());
    agents?.destroy();
  }
}

/** billing_webhook_attempts_total{outcome}: refused = connection refused or blocked by the address guard. */
export function attemptOutcome(response: WebhookResponse): WebhookAttemptOutcome {
  if (response.statusCode !== undefined && response.statusCode >= 200 && response.statusCode < 300) return "succeeded";
  if (response.failure === "timeout") return "timeout";
  if (response.failure === "refused") return "refused";
  return "failed";
}

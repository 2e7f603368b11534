import type { ServiceDeps } from "../platform/service-deps.ts";
import { contextFor } from "../platform/service-deps.ts";
import { newLeaseHolder, recordAndClaim, releaseEndpoint, turnLength, type ClaimedDelivery } from "./claim-delivery.ts";
import { judgeAnswers, recordAttempt, type AttemptVerdict } from "./record-attempt.ts";
import { createSenderAgents, sendWebhook, type SenderAgents, type WebhookResponse } from "./send-webhook.ts";
import { signatureHeader } from "./webhook-secret.ts";
import type { KeyObject } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { WebhookAttemptOutcome } from "../platform/observability/metrics.ts";
import { deliverWebhooksKind, enqueueDelivery, enqueueEndpointDrain } from "./webhook-queue.ts";

/** How long the answers may pause before the requests still out count as slow (see deliverToEndpoint). */
const STRAGGLER_MS = 3;

type DeliverDeps = Pick<ServiceDeps, "orm" | "clock" | "config" | "logger" | "queues" | "metrics">;

interface Answer {
  claimed: ClaimedDelivery;
  response: WebhookResponse;
}

/**
 * Sends an endpoint's due deliveries, oldest event first, until none is due
 * or the turn is used up while other jobs wait (turnLength), keeping up to the endpoint's
 * max_in_flight requests going (one, in event order, when the endpoint is
 * ordered). Every claimed delivery is sent at once: an attempt on record
 * (IN_PROGRESS, or INTERRUPTED after a crash) is always a request that really
 * went out. A slot is free again once its answer is recorded, so a crash
 * repeats at most max_in_flight requests.
 *
 * The database work is one statement at a time (recordAndClaim): it records
 * the answers that came back and claims as many deliveries as that frees
 * slots, in one round trip and one commit, while the other requests are still
 * on their way. It runs when half the slots (or all) are free: batches, not a
 * statement per answer. A failed attempt is rescheduled and the next event
 * goes on: a failing event does not hold the later ones back. A slow receiver
 * occupies one worker slot at most.
 */
export async function deliverToEndpoint(deps: DeliverDeps, endpointId: string): Promise<number> {
  const { config } = deps;
  const holder = newLeaseHolder();
  // Renewed by every claim: long enough for the requests claimed then and their bookkeeping. If we die, the sweep takes over after this.
  const leaseMs = 2 * config.webhookTimeoutMs + 1000;
  const guardDestination = !config.sandbox && !config.webhookAllowPrivate;
  const secretCache = new Map<string, KeyObject>();
  let agents: SenderAgents | undefined;
  /** Requests on their way. */
  const inFlight = new Set<string>();
  /** Answered, not yet recorded. */
  let answers: Answer[] = [];
  /** 410 answers: the first disables the endpoint; each is recorded on its own once nothing else is outstanding. */
  const goneAnswers: Answer[] = [];
  let gone = false;
  let maxInFlight = 1;
  let claimedTotal = 0;
  /** claimedTotal when this turn began (a turn is extended while no other job waits for a worker slot). */
  let turnStart = 0;
  /** The turn is over: finish what is outstanding, give the endpoint back and queue its next turn. */
  let yielding = false;
  let sent = 0;
  /** The last claim found nothing more due: finish what is outstanding before looking again. */
  let nothingDue = false;
  /** A claim with nothing outstanding found nothing to do (or another worker holds the endpoint). */
  let finished = false;
  /** The statement in progress (one at a time). */
  let statement: Promise<void> | undefined;
  let failure: { error: unknown } | undefined;
  let changed = Promise.withResolvers<void>();
  const notify = () => changed.resolve();
  const turnUsed = () => claimedTotal - turnStart >= turnLength(maxInFlight);
  const turnOver = () => yielding;
  let lastAnswerAt = 0;
  let wakeUp: NodeJS.Timeout | undefined;
  /** No answer for STRAGGLER_MS: those still out are slow, claim without them (else wake up when that is so). */
  const waited = () => {
    const quietFor = performance.now() - lastAnswerAt;
    if (quietFor >= STRAGGLER_MS) return true;
    clearTimeout(wakeUp);
    wakeUp = setTimeout(notify, STRAGGLER_MS - quietFor);
    return false;
  };
  /** Runs a piece of work; its state is updated (`done`) before the loop is woken. */
  const track = (work: Promise<void>, done: () => void) =>
    work
      .catch((error: unknown) => void (failure ??= { error }))
      .finally(() => {
        done();
        notify();
      });

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
      lastAnswerAt = performance.now();
      gone = true;
    } else {
      answers.push({ claimed: d, response });
      lastAnswerAt = performance.now();
    }
  };

  /** Records `batch` and, if `claim`, takes the slots left free; then sends what was claimed and queues retries. */
  const recordAndClaimMore = async (batch: Answer[], claim: boolean) => {
    const ctx = contextFor(deps);
    const { items, verdicts } = judgeAnswers(batch, config.webhookRetryScheduleMs, ctx.clock.now());
    const { recorded, claim: claimed } = await recordAndClaim(ctx, {
      endpointId,
      holder,
      leaseMs,
      secretsKey: config.secretsKey,
      record: items,
      claim,
      inFlight: [...inFlight],
      turnClaimed: claimedTotal - turnStart,
      secretCache,
    });
    if (claimed.kind === "claimed") {
      maxInFlight = claimed.endpoint.maxInFlight;
      agents ??= createSenderAgents(maxInFlight);
      claimedTotal += claimed.deliveries.length;
      for (const d of claimed.deliveries) {
        inFlight.add(d.deliveryId);
        void track(send(d), () => inFlight.delete(d.deliveryId));
      }
    } else if (claim && inFlight.size === 0 && answers.length === 0 && goneAnswers.length === 0) {
      // Nothing due (the claim released our lease), disabled, or another worker holds the endpoint.
      finished = true;
    } else if (claim) {
      nothingDue = true;
    }
    await afterRecord(batch.map((a, i) => ({ ...a, verdict: recorded.has(a.claimed.deliveryId) ? verdicts[i]! : { kind: "superseded" } })));
  };

  /**
   * At the end of a turn, yield the worker slot only if another job waits for
   * one (another endpoint, a sweep); otherwise go on with a new turn, without
   * emptying the endpoint's slots, giving the lease back and queueing a job.
   */
  const endTurn = async () => {
    let othersWaiting = true;
    try {
      othersWaiting = (await deps.queues.queue(deliverWebhooksKind.group).getWaitingCount()) > 0;
    } catch {
      // Redis unreachable: yield, as a turn always did.
    }
    if (othersWaiting) yielding = true;
    else turnStart = claimedTotal;
  };

  /** 410 answers, each on its own (the first disables the endpoint), once nothing else is outstanding. */
  const recordGone = async () => {
    const results: (Answer & { verdict: AttemptVerdict })[] = [];
    for (const g of goneAnswers.splice(0)) {
      results.push({ ...g, verdict: await recordAttempt(contextFor(deps), g.claimed, g.response, config.webhookRetryScheduleMs) });
    }
    await afterRecord(results);
  };

  const afterRecord = async (results: (Answer & { verdict: AttemptVerdict })[]) => {
    sent += results.length;
    for (const { claimed: d, verdict, response } of results) {
      if (verdict.kind === "retry") {
        await enqueueDelivery(deps.queues, { endpointId: d.endpointId, deliveryId: d.deliveryId, attemptNumber: d.attemptNumber + 1 }, verdict.delayMs);
      }
      if (verdict.kind === "gone") deps.metrics?.webhookEndpointsDisabled.inc();
      if (verdict.kind !== "succeeded" && verdict.kind !== "superseded") {
        deps.logger.info(
          {
            endpointId: d.endpointId,
            deliveryId: d.deliveryId,
            attempt: d.attemptNumber,
            verdict: verdict.kind,
            status: response.statusCode,
            error: response.error,
          },
          "webhook attempt failed",
        );
      }
    }
  };

  try {
    for (;;) {
      changed = Promise.withResolvers<void>();
      if (failure) throw failure.error;
      if (!statement && !gone && !yielding && turnUsed()) {
        statement = track(endTurn(), () => (statement = undefined));
      }
      if (!statement) {
        const held = inFlight.size + answers.length;
        if (held === 0 && goneAnswers.length === 0) {
          // Everything claimed is recorded.
          if (finished || gone) return sent;
          if (turnOver()) break;
          // Look again: with nothing held any more, an empty claim releases the lease and ends the turn.
          nothingDue = false;
        }
        const claim = !gone && !nothingDue && !turnOver();
        // Claim when every slot is free once the answers are recorded (the most per statement), or when at
        // least half are and the requests still out have kept us waiting (a slow receiver holds one slot,
        // not the endpoint); otherwise only record what came back.
        const run = claim ? inFlight.size === 0 || (maxInFlight - inFlight.size >= Math.ceil(maxInFlight / 2) && waited()) : answers.length > 0;
        if (run) {
          const batch = answers;
          answers = [];
          statement = track(recordAndClaimMore(batch, claim), () => (statement = undefined));
        } else if (goneAnswers.length > 0 && inFlight.size === 0 && answers.length === 0) {
          statement = track(recordGone(), () => (statement = undefined));
        }
      }
      await changed.promise;
    }
    await releaseEndpoint(contextFor(deps), endpointId, holder);
    await enqueueEndpointDrain(deps.queues, endpointId, `turn-${holder}`);
    return sent;
  } finally {
    while (statement || inFlight.size > 0) {
      changed = Promise.withResolvers<void>();
      await changed.promise;
    }
    clearTimeout(wakeUp);
    agents?.destroy();
  }
}

/** billing_webhook_attempts_total{outcome}: refused = connection refused or blocked by the address guard. */
function attemptOutcome(response: WebhookResponse): WebhookAttemptOutcome {
  if (response.statusCode !== undefined && response.statusCode >= 200 && response.statusCode < 300) return "succeeded";
  if (response.failure === "timeout") return "timeout";
  if (response.failure === "refused") return "refused";
  return "failed";
}

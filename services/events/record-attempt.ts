import type { UseCaseContext } from "../platform/use-case.ts";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { ClaimedDelivery } from "./claim-delivery.ts";
import type { WebhookResponse } from "./send-webhook.ts";
import { deliveryMachine, type DeliveryEvent } from "./delivery-status.ts";
import { endpointMachine } from "./endpoint-status.ts";
import { nextRetryDelayMs } from "./retry-schedule.ts";
import { recordAnswer, type AttemptRecordItem } from "./webhook-delivery-store.ts";
import { disableEndpoint, lockEndpointStatus } from "./webhook-endpoint-store.ts";

export type AttemptVerdict =
  | { kind: "succeeded" }
  | { kind: "retry"; at: Date; delayMs: number }
  | { kind: "failed" }
  /** 410 Gone: the endpoint is now disabled. */
  | { kind: "gone" }
  /** Another worker made a newer attempt meanwhile (our lease ran out): only our attempt row was written. */
  | { kind: "superseded" };

const isSuccess = (code: number | undefined) => code !== undefined && code >= 200 && code < 300;

/** What the merchant sees as the reason of a failed attempt. */
function describeFailure(response: WebhookResponse): string {
  return response.error ?? `the endpoint answered HTTP ${response.statusCode}`;
}

interface Judgement {
  verdict: AttemptVerdict;
  event: DeliveryEvent;
  succeeded: boolean;
  gone: boolean;
  error: string | null;
  nextAttemptAt: Date | null;
  retryIndex: number;
}

/** What an answer means for the delivery (pure): done, retry when, failed for good, or gone. */
function judge(claimed: ClaimedDelivery, response: WebhookResponse, retryScheduleMs: readonly number[], now: Date): Judgement {
  const succeeded = isSuccess(response.statusCode);
  const error = succeeded ? null : describeFailure(response).slice(0, 1000);
  const gone = response.statusCode === 410;
  if (succeeded) return { verdict: { kind: "succeeded" }, event: "succeed", succeeded, gone, error, nextAttemptAt: null, retryIndex: claimed.retryIndex };
  if (gone) return { verdict: { kind: "gone" }, event: "gone", succeeded, gone, error, nextAttemptAt: null, retryIndex: claimed.retryIndex };
  const retryIndex = claimed.retryIndex + 1;
  const delayMs = nextRetryDelayMs(retryScheduleMs, retryIndex);
  if (delayMs === undefined) return { verdict: { kind: "failed" }, event: "exhaust", succeeded, gone, error, nextAttemptAt: null, retryIndex };
  const at = new Date(now.getTime() + delayMs);
  return { verdict: { kind: "retry", at, delayMs }, event: "retry", succeeded, gone, error, nextAttemptAt: at, retryIndex };
}

/**
 * Judges a batch of answers (none of them 410: that one disables the
 * endpoint, see recordAttempt): the rows to write, and each verdict in input
 * order if the write moves the delivery (else it is "superseded").
 */
export function judgeAnswers(
  results: readonly { claimed: ClaimedDelivery; response: WebhookResponse }[],
  retryScheduleMs: readonly number[],
  now: Date,
): { items: AttemptRecordItem[]; verdicts: AttemptVerdict[] } {
  const judged = results.map((r) => judge(r.claimed, r.response, retryScheduleMs, now));
  if (judged.some((j) => j.gone)) throw new Error("judgeAnswers: a 410 answer goes through recordAttempt (it disables the endpoint)");
  const items = results.map((r, i): AttemptRecordItem => {
    const j = judged[i]!;
    return {
      attempt_id: r.claimed.attemptId,
      delivery_id: r.claimed.deliveryId,
      event_created_at: r.claimed.eventCreatedAt,
      attempt_number: r.claimed.attemptNumber,
      outcome: j.succeeded ? "SUCCEEDED" : "FAILED",
      status_code: r.response.statusCode ?? null,
      error: j.error,
      duration_ms: r.response.durationMs,
      excerpt: r.response.responseExcerpt?.slice(0, 1000) ?? null,
      next_status: deliveryMachine.next("PENDING", j.event),
      next_attempt_at: j.nextAttemptAt?.toISOString() ?? null,
      retry_index: j.retryIndex,
    };
  });
  return { items, verdicts: judged.map((j) => j.verdict) };
}

/**
 * Records one answer and decides what happens next, in one statement for the
 * common cases; a 410 also disables the endpoint (one transaction). The
 * delivery is only moved if it is still at this attempt (`attempt_count`
 * guard): a stale worker cannot overwrite a newer attempt.
 */
export async function recordAttempt(
  ctx: UseCaseContext,
  claimed: ClaimedDelivery,
  response: WebhookResponse,
  retryScheduleMs: readonly number[],
): Promise<AttemptVerdict> {
  const now = ctx.clock.now();
  const { verdict, event, succeeded, gone, error, nextAttemptAt, retryIndex } = judge(claimed, response, retryScheduleMs, now);
  const write = (em: EntityManager) =>
    recordAnswer(em, {
      attemptId: claimed.attemptId,
      deliveryId: claimed.deliveryId,
      eventCreatedAt: claimed.eventCreatedAt,
      attemptNumber: claimed.attemptNumber,
      outcome: succeeded ? "SUCCEEDED" : "FAILED",
      statusCode: response.statusCode ?? null,
      error,
      durationMs: response.durationMs,
      excerpt: response.responseExcerpt?.slice(0, 1000) ?? null,
      nextStatus: deliveryMachine.next("PENDING", event),
      nextAttemptAt,
      retryIndex,
      now,
    });
  if (!gone) return (await write(ctx.em)) ? verdict : { kind: "superseded" };

  return ctx.em.transactional(async (em) => {
    if (!(await write(em))) return { kind: "superseded" };
    const status = await lockEndpointStatus(em, claimed.endpointId);
    if (status === "ENABLED") {
      await disableEndpoint(em, claimed.endpointId, {
        status: endpointMachine.next(status, "gone"),
        reason: `the endpoint answered 410 Gone to event ${claimed.eventId}`,
        now,
      });
    }
    return verdict;
  });
}

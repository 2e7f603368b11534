import type { UseCaseContext } from "../platform/use-case.ts";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { ClaimedDelivery } from "./claim-delivery.ts";
import type { WebhookResponse } from "./send-webhook.ts";
import { deliveryTransition, type DeliveryEvent } from "./delivery-status.ts";
import { endpointTransition } from "./endpoint-status.ts";
import { nextRetryDelayMs } from "./retry-schedule.ts";

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
export function describeFailure(response: WebhookResponse): string {
  return response.error ?? `the endpoint answered HTTP ${response.statusCode}`;
}

/**
 * Records the answer and decides what happens next, in one statement for the
 * common cases. The delivery is only moved if it is still at this attempt
 * (`attempt_count` guard): a stale worker cannot overwrite a newer attempt.
 */
export async function recordAttempt(
  ctx: UseCaseContext,
  claimed: ClaimedDelivery,
  response: WebhookResponse,
  retryScheduleMs: readonly number[],
): Promise<AttemptVerdict> {
  const now = ctx.clock.now();
  const succeeded = isSuccess(response.statusCode);
  const error = succeeded ? null : describeFailure(response).slice(0, 1000);
  const gone = response.statusCode === 410;
  let event: DeliveryEvent;
  let nextAttemptAt: Date | null = null;
  let retryIndex = claimed.retryIndex;
  let verdict: AttemptVerdict;
  if (succeeded) {
    event = "succeed";
    verdict = { kind: "succeeded" };
  } else if (gone) {
    event = "gone";
    verdict = { kind: "gone" };
  } else {
    retryIndex = claimed.retryIndex + 1;
    const delayMs = nextRetryDelayMs(retryScheduleMs, retryIndex);
    if (delayMs === undefined) {
      event = "exhaust";
      verdict = { kind: "failed" };
    } else {
      event = "retry";
      nextAttemptAt = new Date(now.getTime() + delayMs);
      verdict = { kind: "retry", at: nextAttemptAt, delayMs };
    }
  }
  const write = async (em: EntityManager) => {
    const moved = await em.execute<{ id: string }[]>(
      `with attempt as (
         update webhook_delivery_attempts set outcome = ?, status_code = ?, error = ?, duration_ms = ?, response_excerpt = ?
          where id = ? and outcome = 'IN_PROGRESS' returning id
       )
       update webhook_deliveries set status = ?, next_attempt_at = ?, retry_index = ?, last_status_code = ?, last_error = ?, updated_at = ?
        where id = ? and attempt_count = ? and status = 'PENDING'
       returning id`,
      [
        succeeded ? "SUCCEEDED" : "FAILED",
        response.statusCode ?? null,
        error,
        response.durationMs,
        response.responseExcerpt?.slice(0, 1000) ?? null,
        claimed.attemptId,
        deliveryTransition("PENDING", event),
        nextAttemptAt,
        retryIndex,
        response.statusCode ?? null,
        error,
        now,
        claimed.deliveryId,
        claimed.attemptNumber,
      ],
    );
    return moved.length > 0;
  };
  if (!gone) return (await write(ctx.em)) ? verdict : { kind: "superseded" };

  return ctx.em.transactional(async (em) => {
    if (!(await write(em))) return { kind: "superseded" };
    const [endpoint] = await em.execute<{ status: "ENABLED" | "DISABLED" | "DELETED" }[]>(
      "select status from webhook_endpoints where id = ? for update",
      [claimed.endpointId],
    );
    if (endpoint?.status === "ENABLED") {
      await em.execute(
        `update webhook_endpoints set status = ?, disabled_reason = ?, disabled_at = ?, updated_at = ?, lease_holder = null, lease_expires_at = null
          where id = ?`,
        [endpointTransition(endpoint.status, "gone"), `the endpoint answered 410 Gone to event ${claimed.eventId}`, now, now, claimed.endpointId],
      );
    }
    return verdict;
  });
}

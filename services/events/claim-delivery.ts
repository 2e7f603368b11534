import { randomUUID } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import { eventBody } from "./event-record.ts";
import type { KeyObject } from "node:crypto";
import { openSecret } from "../platform/sealed-secret.ts";
import { signingKey } from "./webhook-secret.ts";
import { recordAnswersAndClaimDue, type AttemptRecordItem } from "./webhook-delivery-store.ts";
import { releaseLease } from "./webhook-endpoint-store.ts";

export interface ClaimedDelivery {
  deliveryId: string;
  attemptId: string;
  attemptNumber: number;
  /** Failed attempts so far in this round (the position in the retry schedule). */
  retryIndex: number;
  endpointId: string;
  eventId: string;
  /** The event's createdAt as Postgres text (exact to the microsecond): the delivery's and attempt's partition key. */
  eventCreatedAt: string;
  url: string;
  /** Active signing secrets (their HMAC keys), newest first. */
  secrets: KeyObject[];
  body: string;
}

/** The endpoint as the claim read it under its row lock. */
interface ClaimedEndpoint {
  url: string;
  /** Active signing secrets (their HMAC keys), newest first. */
  secrets: KeyObject[];
  /** Requests in flight at once (1 when ordered). */
  maxInFlight: number;
  /** One at a time, in event order. */
  ordered: boolean;
}

type ClaimResult =
  | { kind: "claimed"; endpoint: ClaimedEndpoint; deliveries: ClaimedDelivery[] }
  /** Another worker holds the endpoint; it will reach our deliveries. */
  | { kind: "busy" }
  /** Nothing due, or the endpoint is disabled or deleted; any lease of ours is released. */
  | { kind: "idle" };

/**
 * A worker's turn on one endpoint: at least `min` deliveries, `rounds` rounds
 * of its max_in_flight; then it yields the slot so other endpoints are served too.
 */
const TURN = { min: 200, rounds: 20 };
export const turnLength = (inFlight: number): number => Math.max(TURN.min, TURN.rounds * inFlight);

interface RecordAndClaimResult {
  /** Deliveries of `record` that the answers moved (recorded); the others were superseded by a newer attempt. */
  recorded: ReadonlySet<string>;
  claim: ClaimResult;
}

/**
 * Records the answers that came back (if any) and takes the endpoint's next
 * due deliveries, in event order, in one statement (recordAnswersAndClaimDue
 * says how the claim stays safe under concurrency), then opens the claimed
 * deliveries' signing secrets and bodies.
 */
export async function recordAndClaim(
  ctx: UseCaseContext,
  options: {
    endpointId: string;
    holder: string;
    leaseMs: number;
    secretsKey: Buffer;
    /** Answers to record first (judgeAnswers; none of them 410). */
    record: readonly AttemptRecordItem[];
    /** Claim more (false: only record, and keep the lease while requests are out). */
    claim: boolean;
    /** Requests of this holder still on their way (their answers are not in `record`): never claimed twice, and the lease is kept. */
    inFlight: readonly string[];
    /** Deliveries already claimed in this worker's turn on the endpoint (see turnLength). */
    turnClaimed: number;
    /** Signing keys decrypted by an earlier claim of this turn, by ciphertext (decrypted once per turn). */
    secretCache?: Map<string, KeyObject>;
  },
): Promise<RecordAndClaimResult> {
  const now = ctx.clock.now();
  // Excluded from the claim: the requests still out, and the answers this statement records
  // (its snapshot still shows them due; the record's write and the claim's must not meet on one row).
  const excluded = [...options.inFlight, ...options.record.map((r) => r.delivery_id)];
  const rows = await recordAnswersAndClaimDue(ctx.em, {
    endpointId: options.endpointId,
    holder: options.holder,
    leaseMs: options.leaseMs,
    now,
    record: options.record,
    claim: options.claim,
    inFlight: options.inFlight.length,
    excluded,
    turnClaimed: options.turnClaimed,
    turn: TURN,
  });
  const endpoint = rows[0]!;
  const recorded = new Set(endpoint.recorded?.split(",") ?? []);
  if (endpoint.status === null) return { recorded, claim: { kind: "idle" } };
  if (endpoint.busy) return { recorded, claim: { kind: "busy" } };
  if (endpoint.id === null) return { recorded, claim: { kind: "idle" } };
  const decrypt = (ciphertext: string) => {
    let secret = options.secretCache?.get(ciphertext);
    if (secret === undefined) {
      secret = signingKey(openSecret(options.secretsKey, options.endpointId, ciphertext));
      options.secretCache?.set(ciphertext, secret);
    }
    return secret;
  };
  const secrets = [decrypt(endpoint.secret_ciphertext)];
  if (endpoint.previous_secret_ciphertext && endpoint.previous_secret_active) secrets.push(decrypt(endpoint.previous_secret_ciphertext));
  return {
    recorded,
    claim: {
      kind: "claimed",
      endpoint: { url: endpoint.url, secrets, maxInFlight: endpoint.in_flight, ordered: endpoint.ordered },
      deliveries: rows.map((due) => ({
        deliveryId: due.id!,
        attemptId: due.attempt_id,
        attemptNumber: due.attempt_number,
        retryIndex: due.retry_index,
        endpointId: options.endpointId,
        eventId: due.event_id,
        eventCreatedAt: due.event_created_at,
        url: endpoint.url,
        secrets,
        body: eventBody({ id: due.event_id, type: due.type, createdAt: due.created_at, data: due.data, publishedSeq: due.published_seq }),
      })),
    },
  };
}

/** Gives the endpoint back before the lease would expire (end of a worker's turn). */
export async function releaseEndpoint(ctx: UseCaseContext, endpointId: string, holder: string): Promise<void> {
  await releaseLease(ctx.em, endpointId, holder);
}

export const newLeaseHolder = (): string => randomUUID();

import { createHash } from "node:crypto";
import type { Middleware } from "koa";
import type { RedisConnection as Redis } from "../services/platform/redis.ts";
import { ConnectError } from "@connectrpc/connect";
import type { GatewayState } from "./route.ts";
import { HttpError, fromConnectError } from "./http-errors.ts";

export const IDEMPOTENCY_HEADER = "idempotency-key";
export const IDEMPOTENCY_KEY_MAX = 200;
/** An in-flight marker outlives no crashed request by more than this. */
const IN_FLIGHT_MS = 60 * 1000;

interface StoredResult {
  state: "in_flight" | "done";
  fingerprint: string;
  status?: number;
  body?: unknown;
}

export interface IdempotencyStore {
  /** Claims the key; returns the stored entry instead when it already exists. */
  claim(key: string, fingerprint: string): Promise<StoredResult | null>;
  complete(key: string, result: StoredResult): Promise<void>;
  release(key: string): Promise<void>;
  /**
   * Keeps the key claimed in flight for `outcomeUnknownMs` more: the call timed out (504) and the service may still
   * finish it, so a retry meanwhile must not run it a second time (docs/merchant-api.md, Idempotency).
   */
  hold(key: string, fingerprint: string): Promise<void>;
}

/**
 * Redis-backed store. Redis makes the common retry cheap; the database's own
 * uniqueness rules (externalReference, externalId, one open change session)
 * still refuse a duplicate if Redis ever lost a key. A final answer is kept
 * `keepHours` (RETENTION_IDEMPOTENCY_HOURS, 24 by default as Stripe does):
 * Redis expires it, so the keys never pile up, and the same key sent later is
 * a new request (docs/merchant-api.md).
 */
export function redisIdempotencyStore(redis: Redis, prefix: string, keepHours: number, outcomeUnknownMs: number): IdempotencyStore {
  const keepMs = keepHours * 60 * 60 * 1000;
  const k = (key: string) => `${prefix}:idempotency:${key}`;
  return {
    async claim(key, fingerprint) {
      const marker: StoredResult = { state: "in_flight", fingerprint };
      const ok = await redis.set(k(key), JSON.stringify(marker), "PX", IN_FLIGHT_MS, "NX");
      if (ok === "OK") return null;
      const existing = await redis.get(k(key));
      // Expired between SET and GET: treat as claimed by someone else, the caller retries.
      return existing ? (JSON.parse(existing) as StoredResult) : marker;
    },
    async complete(key, result) {
      await redis.set(k(key), JSON.stringify(result), "PX", keepMs);
    },
    async release(key) {
      await redis.del(k(key));
    },
    async hold(key, fingerprint) {
      const marker: StoredResult = { state: "in_flight", fingerprint };
      await redis.set(k(key), JSON.stringify(marker), "PX", outcomeUnknownMs);
    },
  };
}

/**
 * How long after a 504 the service may still commit the call's work: its own deadline (RPC_TIMEOUT_MS, which the
 * gateway's client sends with the call, `connect-timeout-ms`; Connect aborts the handler's signal at it, and a
 * use case checks it before it starts writing) counts from when the service read the call, which was before the
 * gateway's deadline ran out; a write started just before it may still wait for a pool slot
 * (DB_CONNECT_TIMEOUT_MS) and run one statement or commit (DB_STATEMENT_TIMEOUT_MS, which PostgreSQL enforces).
 * Past the sum, the outcome is known: the retry runs again and finds what the first attempt left.
 */
export function outcomeUnknownMs(config: { rpcTimeoutMs: number; dbConnectTimeoutMs: number; dbStatementTimeoutMs: number }): number {
  return config.rpcTimeoutMs + config.dbConnectTimeoutMs + config.dbStatementTimeoutMs;
}

/**
 * Same key + same body → the first response again (status and body), nothing
 * created; same key + different body → 409 IDEMPOTENCY_KEY_REUSED; a request
 * while the first is still running → 409 IDEMPOTENCY_KEY_IN_USE. Keys are
 * scoped to the caller (merchant or operator), the operation and its target
 * (the ids in the path). A final answer is stored, success or client error
 * (404, 409 REFUND_EXCEEDS_CHARGE…); an answer that says "try again"
 * (isRetryable) is not, so the retry really runs again. A 504 says "not known
 * yet": the service may still be doing the work after the gateway stopped
 * waiting, so the key stays in flight until it surely has stopped
 * (outcomeUnknownMs; a retry meanwhile answers 409 IDEMPOTENCY_KEY_IN_USE, as
 * while the first runs), then the retry runs again and meets what the first
 * attempt left (a create answers the subscription it made under that key).
 */
export function idempotency(store: IdempotencyStore, operationId: string, onStoreError: (err: unknown) => void = () => {}): Middleware<GatewayState> {
  /**
   * Recording the answer comes after the work, which is done (or refused) either way: a store that fails now (Redis
   * timing out under load) must not turn that answer into a 500. The claim stays in flight until it expires
   * (IN_FLIGHT_MS): a retry meanwhile answers 409 IDEMPOTENCY_KEY_IN_USE, and after it the database's own keys
   * refuse a duplicate, as when Redis loses a key.
   */
  const record = (write: () => Promise<void>) => write().catch(onStoreError);
  return async (ctx, next) => {
    const key = ctx.get(IDEMPOTENCY_HEADER);
    if (!key) return next();
    if (key.length > IDEMPOTENCY_KEY_MAX) {
      throw new HttpError(400, "INVALID_REQUEST", `Idempotency-Key: must be at most ${IDEMPOTENCY_KEY_MAX} characters`);
    }
    // Per caller (the merchant, or the operator), per operation and per target (the path's ids):
    // the same key for another wallet user or another subscription is another request.
    const target = Object.values((ctx as { params?: Record<string, string> }).params ?? {})
      .map((v) => v.toLowerCase())
      .join("/");
    const scoped = `${ctx.state.merchantId ?? "operator"}:${operationId}:${target}:${sha256(key)}`;
    const fingerprint = sha256(`${ctx.method} ${ctx.path}\n${canonicalJson(ctx.state.body ?? null)}`);
    // Without the store the guarantee cannot be kept: refuse (retryable) rather than risk a duplicate.
    const existing = await store.claim(scoped, fingerprint).catch(() => {
      throw new HttpError(503, "SERVICE_UNAVAILABLE", "Idempotency-Key cannot be honoured right now; retry the request");
    });
    if (existing) {
      if (existing.fingerprint !== fingerprint) {
        throw new HttpError(409, "IDEMPOTENCY_KEY_REUSED", "Idempotency-Key was already used with a different request body");
      }
      if (existing.state === "in_flight") {
        throw new HttpError(409, "IDEMPOTENCY_KEY_IN_USE", "a request with this Idempotency-Key is still being processed");
      }
      ctx.status = existing.status ?? 200;
      ctx.body = existing.body;
      ctx.set("Idempotent-Replayed", "true");
      return;
    }
    try {
      await next();
    } catch (err) {
      const httpError = err instanceof HttpError ? err : err instanceof ConnectError ? fromConnectError(err) : undefined;
      if (httpError?.status === 504) {
        await record(() => store.hold(scoped, fingerprint));
      } else if (httpError && !isRetryable(httpError.status, httpError.code)) {
        await record(() =>
          store.complete(scoped, {
            state: "done",
            fingerprint,
            status: httpError.status,
            body: { error: httpError.code, message: httpError.message },
          }),
        );
      } else {
        await record(() => store.release(scoped));
      }
      // The error itself, not its HttpError: the error handler answers the same status and body (fromConnectError), and
      // a 500's log and the outage log keep what failed (an unreachable service, a wrong token).
      throw err;
    }
    if (isRetryable(ctx.status, (ctx.body as { error?: unknown } | undefined)?.error as string | undefined)) await record(() => store.release(scoped));
    else await record(() => store.complete(scoped, { state: "done", fingerprint, status: ctx.status, body: ctx.body }));
  };
}

/**
 * Answers that mean "not now, try again": a server error or a service away
 * (5xx), a rate limit (429), and a 409 whose code ends in `_IN_PROGRESS`
 * (REFUND_IN_PROGRESS, PAYMENT_IN_PROGRESS: another attempt still holds the
 * work) or says the subscription changed while the request ran. Stored, they would answer every retry for 24 h although the work
 * has since finished or could now run.
 */
function isRetryable(status: number, code?: string): boolean {
  return status >= 500 || status === 429 || (code !== undefined && (code.endsWith("_IN_PROGRESS") || CHANGED_MEANWHILE.has(code)));
}

/** 409s that say "what this request read changed while it ran; send it again": the same request may well succeed now. */
const CHANGED_MEANWHILE: ReadonlySet<string> = new Set(["PLAN_CHANGED", "SUBSCRIPTION_CHANGED"]);

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** JSON with sorted keys, so the same body in another key order is the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

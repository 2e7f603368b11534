import type { Middleware } from "koa";
import type { Logger } from "../../services/platform/logger.ts";
import type { GatewayState } from "../state.ts";
import { HttpError } from "../http-errors.ts";
import type { Bucket, TakeResult } from "./token-bucket.ts";

const RATE_LIMIT_POLICY = "merchant";

export interface RateLimiter {
  /** The per-merchant check for /api/v1 operations (after the API key resolved the merchant). */
  middleware: Middleware<GatewayState>;
  /** An operator changed the merchant's limits. */
  forget(merchantId: string): void;
  /** Requests let through because Redis could not be asked. */
  failOpenCount(): number;
}

interface RateLimiterParts {
  bucketOf(merchantId: string): Promise<Bucket>;
  forget(merchantId: string): void;
  take(key: string, bucket: Bucket): Promise<TakeResult>;
  logger: Logger;
}

/**
 * Counts every /api/v1 request per merchant (all its keys together). Headers
 * follow draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy` names the
 * bucket (q = its size, w = seconds to refill it whole), `RateLimit` says what
 * is left (r) and in how many seconds the bucket is full again (t); a refused
 * request gets 429 RATE_LIMITED with `Retry-After` (whole seconds, at least 1).
 * It runs before idempotency, so a 429 is never stored as a key's result.
 * If Redis cannot be asked the request goes through (fail open): logged once
 * per outage, counted every time.
 */
export function rateLimiter(parts: RateLimiterParts): RateLimiter {
  let failedOpen = 0;
  let outageLogged = false;
  const middleware: Middleware<GatewayState> = async (ctx, next) => {
    const merchantId = ctx.state.merchantId;
    if (!merchantId) return next();
    const bucket = await parts.bucketOf(merchantId);
    let result: TakeResult;
    try {
      result = await parts.take(merchantId, bucket);
      outageLogged = false;
    } catch (err) {
      failedOpen++;
      if (!outageLogged) {
        outageLogged = true;
        parts.logger.warn({ err: (err as Error).message, failedOpen }, "rate limiter unavailable: letting requests through");
      }
      return next();
    }
    const windowSeconds = Math.max(1, Math.ceil(bucket.burst / bucket.perSecond));
    ctx.set("RateLimit-Policy", `"${RATE_LIMIT_POLICY}";q=${bucket.burst};w=${windowSeconds}`);
    const seconds = Math.ceil(result.msBeforeNext / 1000);
    if (!result.allowed) {
      const retryAfter = Math.max(1, seconds);
      ctx.set("RateLimit", `"${RATE_LIMIT_POLICY}";r=0;t=${retryAfter}`);
      ctx.set("Retry-After", String(retryAfter));
      throw new HttpError(
        429,
        "RATE_LIMITED",
        `rate limit exceeded: ${bucket.perSecond} requests per second with bursts of ${bucket.burst}; retry after ${retryAfter} s`,
      );
    }
    ctx.set("RateLimit", `"${RATE_LIMIT_POLICY}";r=${result.remaining};t=${seconds}`);
    await next();
  };
  return { middleware, forget: parts.forget, failOpenCount: () => failedOpen };
}

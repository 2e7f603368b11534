import type { RedisConnection } from "../../services/platform/redis.ts";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";

/**
 * A token bucket in Redis through rate-limiter-flexible: the library owns the
 * key naming, the single atomic EVAL per request and the result object; this
 * script (its `customIncrTtlLuaScript` hook) keeps a bucket instead of a fixed
 * window. The bucket holds `burst` tokens and refills `perSecond` per second,
 * on Redis's own clock (TIME), so every gateway shares one bucket per merchant.
 * A refused request takes no token.
 *
 * Stored per key: "<level> <at-ms>", level = tokens used. The refill rate is
 * carried in the key prefix (`…:r<perSecond>:b<burst>`) because the hook only
 * receives the bucket size; a changed limit therefore starts a fresh bucket.
 * The script returns {consumed, ms}: consumed > burst means refused, ms is the
 * wait until the request could pass (refused) or until the bucket is full (passed).
 */
const TOKEN_BUCKET_LUA = `
local rate = tonumber(string.match(KEYS[1], ':r(%d+):b%d+:'))
local cost = tonumber(ARGV[1])
local burst = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local level = 0
local stored = redis.call('GET', KEYS[1])
if stored then
  local l, at = string.match(stored, '^(%S+) (%S+)$')
  level = math.max(0, tonumber(l) - (now - tonumber(at)) * rate / 1000)
end
if level + cost > burst then
  return {burst + cost, math.ceil((level + cost - burst) * 1000 / rate)}
end
level = level + cost
local full_in = math.ceil(level * 1000 / rate)
redis.call('SET', KEYS[1], tostring(level) .. ' ' .. now, 'PX', full_in + 1000)
return {math.ceil(level), full_in}
`;

export interface Bucket {
  perSecond: number;
  burst: number;
}

export interface TakeResult {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** ms until the request could pass (refused) or the bucket is full again (allowed). */
  msBeforeNext: number;
}

/** One limiter per distinct bucket shape; `redis` must be a connection of its own (the library defines a command on it). */
export function tokenBuckets(redis: RedisConnection, prefix: string) {
  const limiters = new Map<string, RateLimiterRedis>();
  const limiterFor = ({ perSecond, burst }: Bucket) => {
    const id = `r${perSecond}:b${burst}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${prefix}:ratelimit:${id}`,
        points: burst,
        // Only a key lifetime hint for the library; the script sets its own expiry.
        duration: 3600,
        rejectIfRedisNotReady: true,
        customIncrTtlLuaScript: TOKEN_BUCKET_LUA,
        // A refused merchant is refused in memory until its next token is due (no token can
        // arrive sooner), so a flood of over-limit requests costs no Redis round trips.
        inMemoryBlockOnConsumed: burst + 1,
      });
      limiters.set(id, limiter);
    }
    return limiter;
  };
  return {
    /** Takes one token; rejects (with the store's error) only when Redis cannot answer. */
    async take(key: string, bucket: Bucket): Promise<TakeResult> {
      try {
        const res = await limiterFor(bucket).consume(key, 1);
        return { allowed: true, remaining: res.remainingPoints, msBeforeNext: res.msBeforeNext };
      } catch (err) {
        if (err instanceof RateLimiterRes) return { allowed: false, remaining: 0, msBeforeNext: err.msBeforeNext };
        throw err;
      }
    },
  };
}

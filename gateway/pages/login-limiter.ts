import type { RedisConnection as Redis } from "../../services/platform/redis.ts";
import { RateLimiterRedis } from "rate-limiter-flexible";
import type { Logger } from "../../services/platform/logger.ts";

/**
 * Failed hosted-page logins per client address, in a fixed window (Redis).
 * The wallet already throttles per email; this stops one client spraying
 * passwords across many emails. The count and its expiry are set in one
 * atomic step (rate-limiter-flexible's script), so a crash between the two can
 * never leave a counter that never expires. The address is `ctx.ip`, which
 * honours X-Forwarded-For only as TRUST_PROXY allows. If Redis is unreachable
 * the check lets the attempt through (the wallet's own throttle still applies).
 */
export interface LoginLimiter {
  blocked(client: string): Promise<boolean>;
  failed(client: string): Promise<void>;
}

export const PAGE_LOGIN_MAX_FAILURES = 20;
export const PAGE_LOGIN_WINDOW_MS = 15 * 60 * 1000;

export function redisLoginLimiter(redis: Redis, prefix: string, logger: Logger): LoginLimiter {
  const failures = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${prefix}:page-login-failures`,
    points: PAGE_LOGIN_MAX_FAILURES,
    duration: PAGE_LOGIN_WINDOW_MS / 1000,
    rejectIfRedisNotReady: true,
  });
  return {
    async blocked(client) {
      try {
        const res = await failures.get(client);
        return (res?.consumedPoints ?? 0) >= PAGE_LOGIN_MAX_FAILURES;
      } catch (err) {
        logger.warn({ err }, "login limiter unavailable");
        return false;
      }
    },
    async failed(client) {
      try {
        await failures.penalty(client, 1);
      } catch (err) {
        logger.warn({ err }, "login limiter unavailable");
      }
    },
  };
}

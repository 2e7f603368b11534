import type { RedisConnection as Redis } from "../../services/platform/redis.ts";
import type { Logger } from "../../services/platform/logger.ts";

/**
 * Failed hosted-page logins per client address, in a fixed window (Redis).
 * The wallet already throttles per email; this stops one client spraying
 * passwords across many emails. If Redis is unreachable the check lets the
 * attempt through (the wallet's own throttle still applies).
 */
export interface LoginLimiter {
  blocked(client: string): Promise<boolean>;
  failed(client: string): Promise<void>;
}

export const PAGE_LOGIN_MAX_FAILURES = 20;
export const PAGE_LOGIN_WINDOW_MS = 15 * 60 * 1000;

export function redisLoginLimiter(redis: Redis, prefix: string, logger: Logger): LoginLimiter {
  const key = (client: string) => `${prefix}:page-login-failures:${client}`;
  return {
    async blocked(client) {
      try {
        return Number((await redis.get(key(client))) ?? 0) >= PAGE_LOGIN_MAX_FAILURES;
      } catch (err) {
        logger.warn({ err }, "login limiter unavailable");
        return false;
      }
    },
    async failed(client) {
      try {
        const count = await redis.incr(key(client));
        if (count === 1) await redis.pexpire(key(client), PAGE_LOGIN_WINDOW_MS);
      } catch (err) {
        logger.warn({ err }, "login limiter unavailable");
      }
    },
  };
}

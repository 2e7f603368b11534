import { connectRedis } from "../../services/platform/redis.ts";
import type { Config } from "../../services/platform/config.ts";
import type { Logger } from "../../services/platform/logger.ts";
import type { GatewayClients } from "../deps.ts";
import { merchantLimits } from "./merchant-limits.ts";
import { rateLimiter, type RateLimiter } from "./rate-limit.ts";
import { tokenBuckets } from "./token-bucket.ts";

/** The gateway's per-merchant limiter on its own Redis connection (failing fast, so an outage fails open at once). */
export function redisRateLimiter(config: Config, clients: GatewayClients, logger: Logger): { limiter: RateLimiter; close(): void } {
  // Auto-pipelining: the checks of requests handled in one event-loop turn go out in one write (each is
  // still its own atomic script run; a socket write per request cost ~9% of the CPU of B1).
  const redis = connectRedis(config, { maxRetriesPerRequest: 1, enableOfflineQueue: false, enableAutoPipelining: true });
  redis.on("error", () => {});
  const limits = merchantLimits(clients, { perSecond: config.rateLimitPerSecond, burst: config.rateLimitBurst });
  const buckets = tokenBuckets(redis, config.queuePrefix);
  const limiter = rateLimiter({ bucketOf: limits.bucketOf, forget: limits.forget, take: buckets.take, logger });
  return { limiter, close: () => redis.disconnect() };
}

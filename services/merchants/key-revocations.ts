import { connectRedis, type RedisConnection, type RedisTarget } from "../platform/redis.ts";
import { keyRevocationChannel } from "./contract.ts";

/**
 * Gateways cache API-key lookups; a revocation is announced on this Redis
 * channel so every gateway forgets the key at once. If Redis cannot be
 * reached the cache TTL bounds how long a revoked key still works.
 */

export type AnnounceRevocation = (keyHash: string) => Promise<void>;

export function announceVia(redis: RedisConnection, queuePrefix: string): AnnounceRevocation {
  return async (keyHash) => {
    await redis.publish(keyRevocationChannel(queuePrefix), keyHash).catch(() => 0);
  };
}

/** For one-shot tools (the CLI): a short-lived connection that never blocks the command. */
export function announceOnce(target: RedisTarget, queuePrefix: string): AnnounceRevocation {
  return async (keyHash) => {
    const redis = connectRedis(target, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true, connectTimeout: 2000 });
    redis.on("error", () => {});
    try {
      await redis.connect();
      await redis.publish(keyRevocationChannel(queuePrefix), keyHash);
    } catch {
      // Redis unreachable: gateways drop the key when their cache entry expires.
    } finally {
      redis.disconnect();
    }
  };
}

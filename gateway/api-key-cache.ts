import { connectRedis, type RedisTarget } from "../services/platform/redis.ts";
import { keyRevocationChannel } from "../services/merchants/contract.ts";
import type { Logger } from "../services/platform/logger.ts";

interface Entry {
  merchantId: string;
  /** The key's id: who acted, for the audit log. */
  keyId: string;
  expiresAt: number;
}

/**
 * Remembers successful API-key lookups (by the key's SHA-256, never the key)
 * so most requests skip the merchants RPC. Revocations arrive over Redis
 * pub/sub and evict at once; the TTL bounds staleness if Redis is down, and a
 * reconnect clears everything because announcements may have been missed.
 * Timing here is infrastructure time (wall clock), not business time.
 *
 * A lookup that began before a revocation can end after it was heard, with
 * the service's answer from before ("valid"): cached then, the revoked key
 * would work for another TTL. So every forget and clear raises an epoch, a
 * lookup takes the epoch when it starts, and set() keeps its answer only if
 * no revocation (of any key: the check stays O(1)) was heard meanwhile.
 */
export class ApiKeyCache {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  #epoch = 0;

  constructor(ttlMs = 60_000, maxEntries = 10_000) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
  }

  get(keyHash: string): string | undefined {
    return this.lookup(keyHash)?.merchantId;
  }

  lookup(keyHash: string): { merchantId: string; keyId: string } | undefined {
    const entry = this.#entries.get(keyHash);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.#entries.delete(keyHash);
      return undefined;
    }
    return entry;
  }

  /** Take before the lookup starts; pass to set(). */
  get epoch(): number {
    return this.#epoch;
  }

  /** Caches a lookup's answer unless a revocation was heard since `lookupEpoch` (then the answer may be stale). */
  set(keyHash: string, merchantId: string, lookupEpoch: number, keyId = ""): void {
    if (lookupEpoch !== this.#epoch) return;
    if (this.#entries.size >= this.#maxEntries) {
      // Maps iterate in insertion order: drop the oldest.
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(keyHash, { merchantId, keyId, expiresAt: Date.now() + this.#ttlMs });
  }

  forget(keyHash: string): void {
    this.#epoch += 1;
    this.#entries.delete(keyHash);
  }

  clear(): void {
    this.#epoch += 1;
    this.#entries.clear();
  }
}

/**
 * Subscribes the cache to revocation announcements. Lookups are cached only
 * while subscribed: a revocation must never slip by unheard. ioredis queues
 * the SUBSCRIBE until Redis is reachable and re-subscribes after reconnects.
 */
export function listenForRevocations(cache: ApiKeyCache, redis: RedisTarget, queuePrefix: string, logger: Logger) {
  const subscriber = connectRedis(redis, { maxRetriesPerRequest: null });
  let subscribed = false;
  subscriber.on("error", (err) => logger.debug({ err: err.message }, "revocation subscriber error"));
  subscriber.on("message", (_channel, keyHash: string) => cache.forget(keyHash));
  subscriber.on("close", () => {
    // Announcements made while disconnected are lost: forget everything.
    subscribed = false;
    cache.clear();
  });
  subscriber.on("ready", () => {
    // A cluster re-subscribes through its own subscriber node; a single server reports the mode here.
    if (!("condition" in subscriber) || subscriber.condition?.subscriber) subscribed = true;
  });
  subscriber.subscribe(keyRevocationChannel(queuePrefix)).then(
    () => {
      subscribed = true;
    },
    (err: Error) => logger.warn({ err: err.message }, "API-key cache disabled until Redis is reachable"),
  );
  return {
    isLive: () => subscribed,
    close: () => subscriber.disconnect(),
  };
}

import { connectRedis, type RedisTarget } from "../redis.ts";
import type { Logger } from "../logger.ts";
import type { Queues } from "./queues.ts";

/**
 * Pokes: a Redis PUBLISH that tells the processes listening to do now what
 * their sweep would do at its next period. Fire and forget: a lost poke
 * (Redis down, nobody listening) only means the sweep does it a little later.
 */
const channelOf = (prefix: string, name: string) => `${prefix}:poke:${name}`;

export function publishPoke(queues: Queues, name: string): void {
  queues.connection.publish(channelOf(queues.prefix, name), "").catch(() => {});
}

export interface PokeListener {
  close(): Promise<void>;
}

/** Subscribes on its own connection; calls `onPoke` for each poke, and once on every (re)connection (pokes sent meanwhile are gone). */
export function listenForPokes(redis: RedisTarget, prefix: string, name: string, onPoke: () => void, logger: Logger): PokeListener {
  const subscriber = connectRedis(redis, { maxRetriesPerRequest: null });
  const channel = channelOf(prefix, name);
  subscriber.on("error", (err) => logger.debug({ err: err.message, channel }, "poke listener connection error"));
  subscriber.on("message", (got) => {
    if (got === channel) onPoke();
  });
  subscriber.on("ready", () => {
    subscriber.subscribe(channel).then(onPoke, () => {});
  });
  return {
    async close() {
      subscriber.disconnect();
    },
  };
}

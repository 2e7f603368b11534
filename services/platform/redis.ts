import { Cluster, Redis, type RedisOptions } from "ioredis";

/** A single server or a cluster: both speak the commands BullMQ and the gateway use. */
export type RedisConnection = Redis | Cluster;

/** Where Redis is: REDIS_URL, or REDIS_CLUSTER_NODES when it is a cluster. */
export interface RedisTarget {
  redisUrl: string;
  redisClusterNodes: readonly string[];
}

/**
 * Opens a connection to the configured Redis. With cluster nodes it is an
 * ioredis Cluster whose per-node options come from REDIS_URL (password,
 * TLS, database 0) and `options`. Queue keys share one slot through the
 * `{…}` prefix (config.clusterSafePrefix), which BullMQ needs on a cluster.
 */
export function connectRedis(target: RedisTarget, options: RedisOptions = {}): RedisConnection {
  if (target.redisClusterNodes.length === 0) return new Redis(target.redisUrl, options);
  const url = new URL(target.redisUrl);
  const { enableOfflineQueue, lazyConnect, ...perNode } = options;
  const nodeOptions = {
    ...perNode,
    ...(url.username && { username: decodeURIComponent(url.username) }),
    ...(url.password && { password: decodeURIComponent(url.password) }),
    ...(url.protocol === "rediss:" && { tls: {} }),
  };
  const nodes = target.redisClusterNodes.map((n) => {
    const at = n.lastIndexOf(":");
    return { host: n.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(n.slice(at + 1)) };
  });
  return new Cluster(nodes, {
    redisOptions: nodeOptions,
    enableOfflineQueue: enableOfflineQueue ?? true,
    ...(lazyConnect !== undefined && { lazyConnect }),
  });
}

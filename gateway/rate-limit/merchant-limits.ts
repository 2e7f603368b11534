import type { GatewayClients } from "../deps.ts";
import type { Bucket } from "./token-bucket.ts";

/** How long a gateway keeps a merchant's limits before asking again (an operator's change applies within this). */
const LIMITS_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

/**
 * Each merchant's bucket: its own limits where the operator set them, the
 * RATE_LIMIT_* defaults otherwise. Looked up through the merchants service and
 * kept briefly in memory (infrastructure time, not business time); if the
 * lookup fails the defaults apply rather than refusing the request.
 */
export function merchantLimits(clients: GatewayClients, defaults: Bucket) {
  const cache = new Map<string, { bucket: Bucket; expiresAt: number }>();
  return {
    async bucketOf(merchantId: string): Promise<Bucket> {
      const hit = cache.get(merchantId);
      if (hit && hit.expiresAt > Date.now()) return hit.bucket;
      try {
        const { merchant } = await clients.merchants.getMerchant({ id: merchantId });
        const bucket = {
          perSecond: merchant?.rateLimitPerSecond ?? defaults.perSecond,
          burst: merchant?.rateLimitBurst ?? defaults.burst,
        };
        if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
        cache.set(merchantId, { bucket, expiresAt: Date.now() + LIMITS_TTL_MS });
        return bucket;
      } catch {
        return defaults;
      }
    },
    /** The operator changed this merchant's limits through this gateway: apply them now. */
    forget(merchantId: string): void {
      cache.delete(merchantId);
    },
  };
}

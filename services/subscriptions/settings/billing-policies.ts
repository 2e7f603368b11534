import type { EntityManager } from "@mikro-orm/postgresql";
import type { BillingPolicy } from "../renewals/billing-policy.ts";
import { effectiveSettings, readStoredSettings } from "./billing-settings.ts";

/**
 * Each merchant's billing policy as the engine reads it. Postgres holds the
 * settings; this process keeps what it read for at most `ttlMs` (a renewal
 * batch refreshes its merchants with one query per batch: `load`), and an
 * update made through this process forgets its merchant at once. So a change
 * reaches every process within `ttlMs` (docs/merchant-api.md, "Dunning settings").
 */
export interface BillingPolicies {
  readonly defaults: BillingPolicy;
  /** The merchant's policy (cached, or one indexed read). */
  forMerchant(em: EntityManager, merchantId: string): Promise<BillingPolicy>;
  /** Reads these merchants' policies now in one query and caches them. */
  load(em: EntityManager, merchantIds: readonly string[]): Promise<Map<string, BillingPolicy>>;
  /** After an update: the next read goes to Postgres. */
  forget(merchantId: string): void;
}

const POLICY_CACHE_TTL_MS = 5_000;
const POLICY_CACHE_MAX = 10_000;

export function billingPolicies(defaults: BillingPolicy, ttlMs = POLICY_CACHE_TTL_MS, now: () => number = () => performance.now()): BillingPolicies {
  // Monotonic time for the cache's own expiry: this is no business time (the service clock may be moved in sandbox).
  const cache = new Map<string, { policy: BillingPolicy; until: number }>();
  const load = async (em: EntityManager, merchantIds: readonly string[]) => {
    const ids = [...new Set(merchantIds)];
    const stored = await readStoredSettings(em, ids);
    if (cache.size + ids.length > POLICY_CACHE_MAX) cache.clear();
    const until = now() + ttlMs;
    const out = new Map<string, BillingPolicy>();
    for (const id of ids) {
      const policy = effectiveSettings(stored.get(id), defaults).policy;
      cache.set(id, { policy, until });
      out.set(id, policy);
    }
    return out;
  };
  return {
    defaults,
    async forMerchant(em, merchantId) {
      const hit = cache.get(merchantId);
      if (hit && hit.until > now()) return hit.policy;
      return (await load(em, [merchantId])).get(merchantId)!;
    },
    load,
    forget(merchantId) {
      cache.delete(merchantId);
    },
  };
}

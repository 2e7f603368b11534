import type { UseCaseContext } from "../platform/use-case.ts";
import { DomainError } from "../platform/errors.ts";
import { ApiKey } from "./entities.ts";
import { hashApiKey, looksLikeApiKey } from "./api-key-secret.ts";

/** Last use is kept to the minute: a key used all the time costs one write a minute, not one per request. */
const LAST_USE_RESOLUTION_MS = 60_000;

export async function authenticateApiKey(ctx: UseCaseContext, apiKey: string): Promise<{ merchantId: string; keyId: string }> {
  // The digest lookup is by exact hash, so timing reveals nothing about stored keys.
  const key = looksLikeApiKey(apiKey) ? await ctx.em.findOne(ApiKey, { keyHash: hashApiKey(apiKey) }) : null;
  if (!key || key.revokedAt) throw new DomainError("unauthenticated", "INVALID_API_KEY", "missing, unknown or revoked API key");
  const now = ctx.clock.now();
  if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() >= LAST_USE_RESOLUTION_MS) {
    // A guarded single-row update, not a flush: concurrent lookups of the same key write once.
    const stale = new Date(now.getTime() - LAST_USE_RESOLUTION_MS);
    await ctx.em.nativeUpdate(ApiKey, { id: key.id, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lte: stale } }] }, { lastUsedAt: now });
  }
  return { merchantId: key.merchantId, keyId: key.id };
}
